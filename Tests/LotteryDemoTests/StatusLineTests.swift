import ChainBind
import Testing

@testable import LotteryDemo

/// A label that counts the writes its chain makes.
@MainActor
private final class CountingLabel {
  var text = "" {
    didSet { writes += 1 }
  }
  private(set) var writes = 0
}

@Suite @MainActor struct StatusLineTests {
  @Test func theStatusLineShowsTheViewModelsStatusAtOnce() {
    let (session, _) = makeSession()
    #expect(session.view.statusLabel.text == "no draw yet; 666 wins 1 in 10")
    #expect(session.viewModel.status == "no draw yet; 666 wins 1 in 10")
  }

  @Test func theStatusLineFollowsEachPropertyTheStatusReads() {
    let (session, _) = makeSession()
    let status = session.view.statusLabel

    session.view.rateSlider.slide(to: 0.5)  // winRate
    #expect(status.text == "no draw yet; 666 wins 5 in 10")

    session.lottery.winCode = "42"  // winCode
    #expect(status.text == "no draw yet; 42 wins 5 in 10")

    session.lottery.winRate = 1
    session.viewModel.draw()  // history
    #expect(status.text == "last draw won; 42 wins 10 in 10")

    session.lottery.winRate = 0
    session.viewModel.draw()
    #expect(status.text == "last draw lost; 42 wins 0 in 10")
  }

  @Test func aChangeThatLeavesTheStatusEqualWritesNothing() {
    let (session, _) = makeSession()
    let counter = CountingLabel()
    var sent: [String] = []
    // Joins the status line's chain: it counts what that chain sends and writes.
    Bind.in(session.viewModel, \.status)
      .out(counter, \.text)
      .out(key: "test.sent") { sent.append($0) }
    #expect(counter.writes == 1)  // the initial sync
    sent = []

    session.view.rateSlider.slide(to: 0.15)  // still 1 winning slot in 10
    session.lottery.winCode = ""  // still plays 666
    #expect(session.lottery.winRate == 0.15 && session.lottery.winCode.isEmpty)
    #expect(counter.writes == 1)
    #expect(sent.isEmpty)

    session.lottery.winRate = 0
    session.viewModel.draw()
    #expect(counter.text == "last draw lost; 666 wins 0 in 10")
    #expect(counter.writes == 3)
    session.viewModel.draw()  // another loss: the history changes, the status does not
    #expect(session.lottery.history.count == 2)
    #expect(counter.writes == 3)
    #expect(sent == ["no draw yet; 666 wins 0 in 10", "last draw lost; 666 wins 0 in 10"])
    #expect(session.view.statusLabel.text == counter.text)
  }

  @Test func aRateFromTheRemoteConsoleReachesTheStatusLineToo() async {
    let (session, console) = makeSession()
    await session.perform(.remote(0.3))
    #expect(session.view.statusLabel.text == "no draw yet; 666 wins 3 in 10")
    #expect(console.lines.contains("| status    no draw yet; 666 wins 3 in 10      |"))

    // The remote command leaves the status line's chain observing the rate.
    session.view.rateSlider.slide(to: 0.6)
    #expect(session.view.statusLabel.text == "no draw yet; 666 wins 6 in 10")
  }
}
