import Testing

@testable import LotteryDemo

@Suite @MainActor struct HistoryTests {
  @Test func historyIsNewestFirst() {
    let viewModel = LotteryViewModel(seed: 3)
    let draws = (0..<4).map { _ in viewModel.draw() }
    #expect(viewModel.lottery.history == draws.reversed())
    #expect(viewModel.lottery.history.map(\.sn) == [4, 3, 2, 1])
  }

  @Test func historyListFollowsTheModel() async {
    let (session, _) = makeSession()
    #expect(session.view.historyList.draws.isEmpty)
    await session.perform(.draw)
    await session.perform(.draw)
    #expect(session.view.historyList.draws == session.lottery.history)
    #expect(session.view.historyList.draws.map(\.sn) == [2, 1])
  }

  @Test func historyRecordsTheWinCodeEachDrawWasPlayedWith() async {
    let (session, _) = makeSession()
    await session.perform(.draw)
    await session.perform(.winCode("12"))
    await session.perform(.rate(1))
    await session.perform(.draw)
    #expect(session.lottery.history.map(\.winCode) == ["12", "666"])
    #expect(session.lottery.history.first?.isWin == true)
  }

  @Test func historyCommandListsEveryDrawNewestFirst() async {
    let (session, console) = makeSession()
    await session.perform(.history)
    #expect(console.output == "History: no draws yet.\n")
    for _ in 0..<3 { await session.perform(.draw, showsScreen: false) }
    await session.perform(.rate(1), showsScreen: false)
    await session.perform(.draw, showsScreen: false)
    let before = console.output
    await session.perform(.history)
    let listed = console.output.dropFirst(before.count).split(separator: "\n").map(String.init)
    #expect(listed.first == "History, newest first: 4 draws, 1 win")
    #expect(listed.dropFirst().map { $0.split(separator: " ").first } == ["#4", "#3", "#2", "#1"])
    #expect(listed[1].hasSuffix("win code 666 WIN"))
  }
}
