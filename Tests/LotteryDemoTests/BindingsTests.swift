import Testing

@testable import LotteryDemo

@Suite @MainActor struct BindingsTests {
  @Test func initialSyncFillsEveryWidget() {
    let (session, _) = makeSession()
    let view = session.view
    #expect(view.snLabel.text == "1")
    #expect(view.background.color == .blue)
    #expect(view.rateLabel.text == "0.1")
    #expect(view.chanceLabel.text == "1 in 10")
    #expect(view.rateSlider.value == 0.1)
    #expect(!view.jackpotSwitch.isOn)
    #expect(view.codeLabel.text == "---")
    #expect(view.rollingDisplay.code == nil)
    #expect(view.winCodeLabel.text == "666")
    #expect(view.winCodeField.text == "666")
    #expect(view.isWinLabel.text == "false")
    #expect(view.lamp.isDark && !view.lamp.isFlashing)
  }

  @Test func issueNumberDrivesTheLabelAndCyclesTheBackground() {
    let (session, _) = makeSession()
    var colors: [BackgroundColor] = []
    for _ in 0..<4 {
      session.viewModel.draw()
      colors.append(session.view.background.color)
    }
    #expect(session.view.snLabel.text == "5")
    #expect(colors == [.magenta, .cyan, .blue, .magenta])
  }

  @Test func aWinLightsTheLampAndFlashesUntilTheNextLoss() {
    let (session, _) = makeSession()
    let view = session.view
    session.lottery.winRate = 1
    session.viewModel.draw()
    #expect(view.isWinLabel.text == "true")
    #expect(!view.lamp.isDark && view.lamp.isFlashing)

    session.lottery.winRate = 0
    session.viewModel.draw()
    #expect(view.isWinLabel.text == "false")
    #expect(view.lamp.isDark && !view.lamp.isFlashing)
  }

  @Test func theWheelsRollOnEveryDrawEvenForTheSameCode() {
    let (session, _) = makeSession()
    let display = session.view.rollingDisplay
    session.lottery.winRate = 1
    for _ in 0..<2 {
      session.viewModel.draw()
      #expect(display.isRolling)
      #expect(display.wheels == ["6", "6", "6"])
      #expect(session.view.codeLabel.text == "666")
      display.finishRolling()
    }
  }

  @Test func shortCodesAreRightAlignedOnTheWheels() async {
    let (session, _) = makeSession()
    await session.perform(.winCode("7"), showsScreen: false)
    await session.perform(.rate(1), showsScreen: false)
    await session.perform(.draw, showsScreen: false)
    #expect(session.view.rollingDisplay.wheels == ["-", "-", "7"])
  }
}
