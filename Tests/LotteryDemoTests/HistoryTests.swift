import ChainBind
import Testing

@testable import LotteryDemo

@Suite @MainActor struct HistoryTests {
  @Test func historyIsNewestFirstAndKeepsTheLastThree() {
    let viewModel = LotteryViewModel(seed: 3)
    let draws = (0..<4).map { _ in viewModel.draw() }
    #expect(viewModel.lottery.history == Array(draws.reversed().prefix(3)))
    #expect(viewModel.lottery.history.map(\.sn) == [4, 3, 2])
    #expect(viewModel.lottery.log == draws.reversed())
    #expect(viewModel.lottery.log.map(\.sn) == [4, 3, 2, 1])
  }

  @Test func drawsAreIdentifiedByIssue() {
    let draw = Draw(sn: 7, code: "123", winCode: "666")
    #expect(draw.id == 7)
  }

  @Test func historyListRowsFollowTheModelDrawAfterDraw() async {
    let (session, _) = makeSession()
    for count in 1...5 {
      await session.perform(.draw, showsScreen: false)
      #expect(session.view.historyList.draws == session.lottery.history)
      #expect(session.view.historyList.draws.count == min(count, Lottery.historyLimit))
    }
    #expect(session.view.historyList.draws.map(\.sn) == [5, 4, 3])
  }

  @Test func fourthDrawInsertsAtTheTopAndDropsTheOldest() async throws {
    let (session, _) = makeSession()
    for _ in 0..<3 { await session.perform(.draw, showsScreen: false) }
    let list = session.view.historyList
    #expect(list.lastChangeText == "+#3 at top")
    await session.perform(.draw, showsScreen: false)
    let change = try #require(list.lastChange)
    #expect(!change.isInitial)
    #expect(change.inserted == [0])
    #expect(change.new[0].sn == 4)
    #expect(change.removed == [2])
    #expect(change.old[2].sn == 1)
    #expect(change.moved.isEmpty)
    #expect(change.updated.isEmpty)
    #expect(list.lastChangeText == "+#4 at top, -#1 fell off")
    #expect(list.draws.map(\.sn) == [4, 3, 2])
  }

  @Test func applyingAChangeMovesAndUpdatesRows() {
    let list = HistoryList()
    let one = Draw(sn: 1, code: "111", winCode: "666")
    let two = Draw(sn: 2, code: "222", winCode: "666")
    let three = Draw(sn: 3, code: "333", winCode: "666")
    list.apply(ListChange(from: [], to: [one, two, three]))
    #expect(list.draws == [one, two, three])
    let newTwo = Draw(sn: 2, code: "666", winCode: "666")
    list.apply(ListChange(from: [one, two, three], to: [three, newTwo, one]))
    #expect(list.draws == [three, newTwo, one])
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

  @Test func theHistoryListMovesAndUpdatesARowStepByStep() {
    let list = HistoryList()
    let one = Draw(sn: 1, code: "111", winCode: "666")
    let two = Draw(sn: 2, code: "222", winCode: "666")
    let three = Draw(sn: 3, code: "333", winCode: "666")
    list.apply(ListChange(from: [], to: [one, two, three]))
    let newThree = Draw(sn: 3, code: "666", winCode: "666")
    let change = ListChange(from: [one, two, three], to: [newThree, one, two])
    #expect(change.updated == [0])
    list.apply(change)
    #expect(list.draws == [newThree, one, two])
    #expect(list.lastChangeText == "#3 moved to 0, #3 updated")
  }
}
