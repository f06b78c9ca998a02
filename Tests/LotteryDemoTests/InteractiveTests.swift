import Testing

@testable import LotteryDemo

@Suite @MainActor struct InteractiveTests {
  @Test func pipedCommandsRunUntilQuit() async {
    let (code, console) = await runDemo(["--interactive"], input: "rate 1\ndraw\nquit\ndraw\n")
    #expect(code == 0)
    let lines = console.lines
    #expect(lines.contains("lottery> rate 1"))
    #expect(lines.contains("lottery> draw"))
    #expect(lines.filter { $0.hasPrefix("Drawing issue #") } == ["Drawing issue #1..."])
    #expect(lines.contains("| code      666             won     true       |"))
    #expect(console.output.hasSuffix("lottery> quit\nBye.\n"))
  }

  @Test func endOfInputEndsTheSession() async {
    let (code, console) = await runDemo(["-i"], input: "draw\n")
    #expect(code == 0)
    #expect(console.output.hasSuffix("lottery> \n(end of input) Bye.\n"))
  }

  @Test func badInputSaysWhatWasExpectedAndGoesOn() async {
    let input = """
      bogus
      rate 2
      rate
      remote
      remote 2
      remote fast
      slide abc
      switch maybe
      type
      draw now

      history
      """
    let (code, console) = await runDemo(["-i"], input: input)
    #expect(code == 0)
    let complaints = console.lines.filter { $0.hasPrefix("! ") }
    #expect(
      complaints == [
        "! unknown command 'bogus'; type 'help' for the list",
        "! 'rate' takes a number from 0 to 1, such as 'rate 0.5', not '2'",
        "! 'rate' takes a number from 0 to 1, such as 'rate 0.5'",
        "! 'remote' takes a number from 0 to 1, such as 'remote 0.5'",
        "! 'remote' takes a number from 0 to 1, such as 'remote 0.5', not '2'",
        "! 'remote' takes a number from 0 to 1, such as 'remote 0.5', not 'fast'",
        "! 'slide' takes a number from 0 to 1, such as 'slide 0.5', not 'abc'",
        "! 'switch' takes 'on' or 'off', such as 'switch on', not 'maybe'",
        "! 'type' takes the digits to type, such as 'type 777'",
        "! 'draw' takes no argument",
      ])
    #expect(console.output.contains("lottery> history\nHistory: no draws yet.\n"))
  }

  @Test func everyCommandWorksFromInput() async {
    let input = """
      help
      slide 1
      switch off
      backspace
      type 12
      wincode 9
      remote 0.4
      draw
      history
      quit
      """
    let (_, console) = await runDemo(["-i", "--seed", "5"], input: input)
    let output = console.output
    #expect(output.contains("  switch on|off   flip the jackpot switch"))
    #expect(output.contains("  backspace -> field [66]"))
    #expect(output.contains("  key '2' -> rejected by the filter"))
    #expect(output.contains("| win code  9 "))
    #expect(output.contains("  remote <0…1>    set the win rate from a background thread"))
    #expect(output.contains("lottery> remote 0.4\n  (background thread) the remote console"))
    #expect(output.contains("the screen still shows rate 0.1: the change waits for the main actor"))
    #expect(output.contains("| rate      0.4             chance  4 in 10    |"))
    #expect(output.contains("win code 9   -") || output.contains("win code 9   WIN"))
  }

  struct ParseCase: CustomTestStringConvertible, Sendable {
    let line: String
    let command: Command?
    var testDescription: String { "'\(line)'" }
  }

  @Test(arguments: [
    ParseCase(line: "", command: nil),
    ParseCase(line: "   ", command: nil),
    ParseCase(line: "DRAW", command: .draw),
    ParseCase(line: "  rate 0.25 ", command: .rate(0.25)),
    ParseCase(line: "Remote 0.3", command: .remote(0.3)),
    ParseCase(line: "slide 1", command: .slide(1)),
    ParseCase(line: "switch ON", command: .switchTo(isOn: true)),
    ParseCase(line: "switch off", command: .switchTo(isOn: false)),
    ParseCase(line: "type 7777", command: .type("7777")),
    ParseCase(line: "backspace", command: .backspace),
    ParseCase(line: "wincode 042", command: .winCode("042")),
    ParseCase(line: "history", command: .history),
    ParseCase(line: "exit", command: .quit),
  ])
  func parsesCommands(_ example: ParseCase) throws {
    #expect(try Command.parse(example.line) == example.command)
  }

  @Test(arguments: [
    "rate nan", "rate inf", "rate -0.1", "remote nan", "remote 0.3 0.4", "slide 1.01", "switch",
    "quit now",
  ])
  func rejectsBadValues(_ line: String) {
    #expect(throws: CommandError.self) { try Command.parse(line) }
  }

  @Test func helpSaysThatTypeAppendsToTheField() {
    let line = LotterySession.helpText.split(separator: "\n").first { $0.contains("type <digits>") }
    #expect(line?.contains("at the end of the win-code field") == true)
  }
}
