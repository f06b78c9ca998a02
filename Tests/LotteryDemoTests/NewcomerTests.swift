import ChainBind
import Testing

@testable import LotteryDemo

/// What a newcomer met in the first hour with the demo: each fixed, each pinned here.
@Suite @MainActor struct NewcomerTests {
  @Test func theScreenAfterADrawIsHeadedWithTheNextIssue() async {
    let (_, console) = await runDemo(["--interactive"], input: "draw\nquit\n")
    let lines = console.lines
    let drawing = lines.firstIndex(of: "Drawing issue #1...")
    let title = lines.firstIndex { $0.hasPrefix("| LOTTERY  next issue #2 ") }
    #expect(drawing != nil)
    #expect(title != nil)
    #expect((drawing ?? 0) < (title ?? 0))
    #expect(!lines.contains { $0.hasPrefix("| LOTTERY  issue #") })
  }

  @Test func helpSaysThatTypeAppendsToTheField() {
    let line = LotterySession.helpText.split(separator: "\n").first { $0.contains("type <digits>") }
    #expect(line?.contains("at the end of the win-code field") == true)
  }

  struct LongArgument: CustomTestStringConvertible, Sendable {
    let line: String
    let expected: String
    var testDescription: String { expected }
  }

  nonisolated static let longArguments = [
    LongArgument(
      line: "rate " + String(repeating: "9", count: 5_000),
      expected: "'rate' takes a number from 0 to 1, such as 'rate 0.5', not"
        + " '99999999999999999999…' (5000 characters)"),
    LongArgument(
      line: String(repeating: "x", count: 5_000),
      expected:
        "unknown command 'xxxxxxxxxxxxxxxxxxxx…' (5000 characters); type 'help' for the list"),
    LongArgument(
      line: "switch " + String(repeating: "o", count: 5_000),
      expected: "'switch' takes 'on' or 'off', such as 'switch on', not"
        + " 'oooooooooooooooooooo…' (5000 characters)"),
  ]

  @Test(arguments: longArguments)
  func anErrorQuotesALongArgumentShortened(_ argument: LongArgument) {
    #expect(throws: CommandError(argument.expected)) { try Command.parse(argument.line) }
  }

  @Test func anOptionErrorQuotesALongArgumentShortened() {
    let long = "x" + String(repeating: "7", count: 4_999)
    let error = OptionError(
      "--seed takes a whole number from 0 to \(UInt64.max), not 'x7777777777777777777…'"
        + " (5000 characters)")
    #expect(throws: error) { try Options(parsing: ["--seed", long]) }
  }

  @Test func aRejectedWinCodeIsQuotedShortened() async {
    let (session, console) = makeSession()
    await session.perform(.winCode(String(repeating: "1", count: 5_000)), showsScreen: false)
    #expect(
      console.output
        == "The model's winCode was set to '11111111111111111111…' (5000 characters): rejected by"
        + " the filter (digits only, at most 3); it stays '666'.\n")
  }

  @Test func aShortArgumentIsQuotedWhole() {
    #expect(quoted("abc") == "'abc'")
    #expect(quoted(String(repeating: "a", count: 20)) == "'\(String(repeating: "a", count: 20))'")
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
