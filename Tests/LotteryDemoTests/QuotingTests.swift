import Testing

@testable import LotteryDemo

/// How error messages quote what the user typed: whole when short, cut when long, so that a
/// pasted page does not fill the screen again.
@Suite @MainActor struct QuotingTests {
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
}
