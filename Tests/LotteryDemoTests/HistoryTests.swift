import Testing

@testable import LotteryDemo

@Suite struct HistoryTests {
  @Test func historyIsNewestFirst() {
    let viewModel = LotteryViewModel(seed: 3)
    let draws = (0..<4).map { _ in viewModel.draw() }
    #expect(viewModel.lottery.history == draws.reversed())
    #expect(viewModel.lottery.history.map(\.sn) == [4, 3, 2, 1])
  }

  @Test func historyListFollowsTheModel() {
    let (session, _) = makeSession()
    #expect(session.view.historyList.draws.isEmpty)
    session.perform(.draw)
    session.perform(.draw)
    #expect(session.view.historyList.draws == session.lottery.history)
    #expect(session.view.historyList.draws.map(\.sn) == [2, 1])
  }

  @Test func historyRecordsTheWinCodeEachDrawWasPlayedWith() {
    let (session, _) = makeSession()
    session.perform(.draw)
    session.perform(.winCode("12"))
    session.perform(.rate(1))
    session.perform(.draw)
    #expect(session.lottery.history.map(\.winCode) == ["12", "666"])
    #expect(session.lottery.history.first?.isWin == true)
  }

  @Test func historyCommandListsEveryDrawNewestFirst() {
    let (session, console) = makeSession()
    session.perform(.history)
    #expect(console.output == "History: no draws yet.\n")
    for _ in 0..<3 { session.perform(.draw, showsScreen: false) }
    session.perform(.rate(1), showsScreen: false)
    session.perform(.draw, showsScreen: false)
    let before = console.output
    session.perform(.history)
    let listed = console.output.dropFirst(before.count).split(separator: "\n").map(String.init)
    #expect(listed.first == "History, newest first: 4 draws, 1 win")
    #expect(listed.dropFirst().map { $0.split(separator: " ").first } == ["#4", "#3", "#2", "#1"])
    #expect(listed[1].hasSuffix("win code 666 WIN"))
  }
}
