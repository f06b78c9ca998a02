import Testing

@testable import LotteryDemo

@Suite @MainActor struct OptionsTests {
  @Test func defaults() throws {
    let options = try Options(parsing: [])
    #expect(options.seed == 2024)
    #expect(options.rounds == 5)
    #expect(!options.isInteractive && !options.showsHelp)
  }

  @Test func valuesInBothSpellings() throws {
    let options = try Options(parsing: ["--seed", "9", "--rounds=3"])
    #expect(options.seed == 9 && options.rounds == 3)
    #expect(try Options(parsing: ["--interactive", "--seed=0"]).isInteractive)
    #expect(try Options(parsing: ["-i"]).isInteractive)
  }

  @Test func helpPrintsUsageAndExitsZero() async {
    for flag in ["--help", "-h"] {
      let (code, console) = await runDemo([flag])
      #expect(code == 0)
      #expect(console.output.hasPrefix("USAGE: LotteryDemo"))
      #expect(console.errors.isEmpty)
    }
  }

  struct BadCommandLine: CustomTestStringConvertible, Sendable {
    let arguments: [String]
    let message: String
    var testDescription: String { arguments.joined(separator: " ") }
  }

  @Test(arguments: [
    BadCommandLine(arguments: ["--frobnicate"], message: "unknown option '--frobnicate'"),
    BadCommandLine(arguments: ["-x"], message: "unknown option '-x'"),
    BadCommandLine(arguments: ["draw"], message: "unexpected argument 'draw'"),
    BadCommandLine(arguments: ["--seed"], message: "--seed needs a value"),
    BadCommandLine(arguments: ["--seed", "--rounds", "2"], message: "--seed needs a value"),
    BadCommandLine(arguments: ["--seed", "abc"], message: "--seed takes a whole number"),
    BadCommandLine(arguments: ["--seed", "-1"], message: "--seed takes a whole number"),
    BadCommandLine(arguments: ["--rounds", "0"], message: "--rounds takes a whole number from 1"),
    BadCommandLine(arguments: ["--rounds=1001"], message: "--rounds takes a whole number from 1"),
    BadCommandLine(arguments: ["--rounds", "2.5"], message: "--rounds takes a whole number"),
    BadCommandLine(arguments: ["--interactive=yes"], message: "--interactive takes no value"),
    BadCommandLine(
      arguments: ["-i", "--rounds", "3"], message: "--rounds applies to the scripted"),
  ])
  func badCommandLineExitsTwoWithAMessage(_ example: BadCommandLine) async {
    let (code, console) = await runDemo(example.arguments)
    #expect(code == 2)
    #expect(console.output.isEmpty)
    #expect(console.errors.hasPrefix("LotteryDemo: error: \(example.message)"))
    #expect(console.errors.contains("--help"))
  }
}
