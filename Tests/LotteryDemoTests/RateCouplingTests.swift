import ChainBind
import Testing

@testable import LotteryDemo

@Suite @MainActor struct RateCouplingTests {
  @Test func sliderAtExactlyOneTurnsTheSwitchOn() {
    let (session, _) = makeSession()
    let view = session.view
    view.rateSlider.slide(to: 1.0)
    #expect(view.jackpotSwitch.isOn)
    #expect(session.lottery.winRate == 1.0)
    #expect(view.rateLabel.text == "1.0")
    #expect(view.chanceLabel.text == "10 in 10")

    view.rateSlider.slide(to: 0.9)
    #expect(!view.jackpotSwitch.isOn)
    #expect(view.rateLabel.text == "0.9")
  }

  @Test func switchMovesTheRateAndTheSlider() {
    let (session, _) = makeSession()
    let view = session.view
    view.rateSlider.slide(to: 0.4)
    #expect(view.jackpotSwitch.turn(on: true))
    #expect(session.lottery.winRate == 1.0)
    #expect(view.rateSlider.value == 1.0)
    #expect(view.rateLabel.text == "1.0")

    #expect(view.jackpotSwitch.turn(on: false))
    #expect(session.lottery.winRate == 0.1)
    #expect(view.rateSlider.value == 0.1)
    #expect(view.rateLabel.text == "0.1")
    #expect(view.chanceLabel.text == "1 in 10")
  }

  @Test func modelRateDrivesSliderAndSwitch() {
    let (session, _) = makeSession()
    session.lottery.winRate = 1
    #expect(session.view.jackpotSwitch.isOn && session.view.rateSlider.value == 1)
    session.lottery.winRate = 0.99
    #expect(!session.view.jackpotSwitch.isOn)
    #expect(session.view.rateLabel.text == "0.9")  // whole tenths, as the chance
    #expect(session.view.chanceLabel.text == "9 in 10")
  }

  @Test func eachEditIsOneChangeWithoutLoops() {
    let (session, _) = makeSession()
    var changes: [Double] = []
    Bind.inout(session.lottery, \.winRate).out(key: "test.count") { changes.append($0) }
    changes = []

    session.view.jackpotSwitch.turn(on: true)
    session.view.rateSlider.slide(to: 0.5)
    session.view.rateSlider.slide(to: 1.0)
    session.view.jackpotSwitch.turn(on: false)
    #expect(changes == [1.0, 0.5, 1.0, 0.1])
  }

  @Test func flippingTheSwitchToWhereItIsSendsNothing() {
    let (session, _) = makeSession()
    session.view.rateSlider.slide(to: 0.3)
    #expect(!session.view.jackpotSwitch.turn(on: false))
    #expect(session.lottery.winRate == 0.3)
  }

  @Test func ratesOutsideZeroToOneAreRefused() {
    let (session, _) = makeSession()
    session.lottery.winRate = 1.5
    #expect(session.lottery.winRate == 0.1)
    #expect(session.view.rateSlider.value == 0.1)
  }
}
