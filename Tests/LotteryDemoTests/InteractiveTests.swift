import Testing

@testable import LotteryDemo

@Suite struct InteractiveTests {
  @Test func pipedCommandsRunUntilQuit() {
    let (code, console) = runDemo(["--interactive"], input: "rate 1\ndraw\nquit\ndraw\n")
    #expect(code == 0)
    let lines = console.lines
    #expect(lines.contains("lottery> rate 1"))
    #expect(lines.contains("lottery> draw"))
    #expect(lines.filter { $0.hasPrefix("Drawing issue #") } == ["Drawing issue #1..."])
    #expect(lines.contains("| code      666             won     true       |"))
    #expect(console.output.hasSuffix("lottery> quit\nBye.\n"))
  }

  @Test func endOfInputEndsTheSession() {
    let (code, console) = runDemo(["-i"], input: "draw\n")
    #expect(code == 0)
    #expect(console.output.hasSuffix("lottery> \n(end of input) Bye.\n"))
  }

  @Test func badInputSaysWhatWasExpectedAndGoesOn() {
    let input = """
      bogus
      rate 2
      rate
      slide abc
      switch maybe
      type
      draw now

      history
      """
    let (code, console) = runDemo(["-i"], input: input)
    #expect(code == 0)
    let complaints = console.lines.filter { $0.hasPrefix("! ") }
    #expect(
      complaints == [
        "! unknown command 'bogus'; type 'help' for the list",
        "! 'rate' takes a number from 0 to 1, such as 'rate 0.5', not '2'",
        "! 'rate' takes a number from 0 to 1, such as 'rate 0.5'",
        "! 'slide' takes a number from 0 to 1, such as 'slide 0.5', not 'abc'",
        "! 'switch' takes 'on' or 'off', such as 'switch on', not 'maybe'",
        "! 'type' takes the digits to type, such as 'type 777'",
        "! 'draw' takes no argument",
      ])
    #expect(console.output.contains("lottery> history\nHistory: no draws yet.\n"))
  }

  @Test func everyCommandWorksFromInput() {
    let input = """
      help
      slide 1
      switch off
      backspace
      type 12
      wincode 9
      draw
      history
      quit
      """
    let (_, console) = runDemo(["-i", "--seed", "5"], input: input)
    let output = console.output
    #expect(output.contains("  switch on|off   flip the jackpot switch"))
    #expect(output.contains("  backspace -> field [66]"))
    #expect(output.contains("  key '2' -> rejected by the filter"))
    #expect(output.contains("| win code  9 "))
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

  @Test(arguments: ["rate nan", "rate inf", "rate -0.1", "slide 1.01", "switch", "quit now"])
  func rejectsBadValues(_ line: String) {
    #expect(throws: CommandError.self) { try Command.parse(line) }
  }
}
