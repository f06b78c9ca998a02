import Testing

@testable import LotteryDemo

/// What a user can type that looks right and is not.
///
/// Accented or joined digits, invisible characters, a negative zero, a rate between tenths, a
/// second argument: each gets a message or the screen that matches it, never a silent change.
@Suite @MainActor struct TypedInputTests {
  struct Lookalike: CustomTestStringConvertible, Sendable {
    let code: String
    let name: String
    var testDescription: String { name }
  }

  nonisolated static let lookalikes = [
    Lookalike(code: "1\u{FE0F}\u{20E3}", name: "a keycap digit"),
    Lookalike(code: "7\u{301}", name: "a digit with a combining accent"),
    Lookalike(code: "7\u{200D}77", name: "digits around a zero-width joiner"),
    Lookalike(code: "\u{0663}", name: "an Arabic-Indic digit"),
    Lookalike(code: "\u{FF17}", name: "a full-width digit"),
    Lookalike(code: "77\u{0}", name: "digits and a NUL"),
  ]

  @Test(arguments: lookalikes)
  func aLookalikeOfADigitIsNoWinCode(_ lookalike: Lookalike) async {
    let (session, console) = makeSession()
    await session.perform(.winCode(lookalike.code), showsScreen: false)
    #expect(session.lottery.winCode == "666")
    #expect(session.view.winCodeField.text == "666")
    #expect(console.output.contains("rejected by the filter"))
  }

  @Test(arguments: lookalikes)
  func aLookalikeTypedIntoTheFieldIsRejected(_ lookalike: Lookalike) {
    let (session, _) = makeSession()
    let field = session.view.winCodeField
    for _ in 0..<3 { field.deleteBackward() }
    for key in lookalike.code { field.type(key) }
    #expect(SlotMachine.isWinCode(session.lottery.winCode))
    #expect(field.text == session.lottery.winCode)
  }

  @Test(arguments: ["", "0", "7", "42", "777", "007"])
  func asciiDigitsAreWinCodes(_ code: String) {
    #expect(SlotMachine.isWinCode(code))
  }

  @Test(arguments: [
    "rate 0.5\u{0}junk", "slide 0.5\u{0}", "remote 0.3\u{0}9", "draw\u{200B}", "\u{1B}[31mdraw",
    "wincode 7\u{200D}77", "type 7\u{2060}",
  ])
  func aLineWithAnInvisibleCharacterIsRefusedAndNamesIt(_ line: String) {
    let hidden = line.unicodeScalars.first(where: isHidden)!
    #expect(throws: CommandError.self) { try Command.parse(line) }
    do {
      _ = try Command.parse(line)
    } catch {
      #expect(error.description.contains(escaped(hidden)))
      #expect(!error.description.unicodeScalars.contains(where: isHidden))
    }
  }

  @Test func aByteOrderMarkAtTheStartOfALineIsIgnored() throws {
    #expect(try Command.parse("\u{FEFF}draw") == .draw)
    #expect(try Command.parse("\u{FEFF}rate 0.5") == .rate(0.5))
  }

  @Test func whiteSpaceControlsStillSeparateWords() throws {
    #expect(try Command.parse("rate\t0.5\r") == .rate(0.5))
  }

  @Test(arguments: ["rate -0", "slide -0.0", "remote -0"])
  func negativeZeroIsZero(_ line: String) throws {
    let command = try Command.parse(line)
    switch command {
    case .rate(let value), .slide(let value), .remote(let value):
      #expect(value == 0 && value.sign == .plus)
    default: Issue.record("parsed as \(String(describing: command))")
    }
  }

  @Test func theRateLabelAfterANegativeZeroShowsZero() async {
    let (session, _) = makeSession()
    await session.perform(try! #require(try Command.parse("rate -0")), showsScreen: false)
    #expect(session.view.rateLabel.text == "0.0")
  }

  @Test(arguments: [0.0, 0.09, 0.1, 0.19, 0.25, 0.3, 0.7, 0.91, 0.99, 0.999, 1.0])
  func theRateLabelAgreesWithTheChance(_ rate: Double) async {
    let (session, _) = makeSession()
    await session.perform(.rate(rate), showsScreen: false)
    let slots = SlotMachine.winningSlotCount(forRate: rate)
    #expect(session.view.chanceLabel.text == "\(slots) in 10")
    #expect(session.view.rateLabel.text == (slots == 10 ? "1.0" : "0.\(slots)"))
  }

  @Test func aSecondArgumentIsNamed() {
    #expect(
      throws: CommandError(
        "'rate' takes one argument, a number from 0 to 1, such as 'rate 0.5', not 2: '0.5 0.6'")
    ) { try Command.parse("rate 0.5 0.6") }
  }

  @Test func thePipedEchoShowsInvisibleCharacters() async {
    let (code, console) = await runDemo(["-i"], input: "dr\u{1B}aw\nquit\n")
    #expect(code == 0)
    #expect(console.lines.contains("lottery> dr<U+001B>aw"))
    #expect(!console.output.unicodeScalars.contains("\u{1B}"))
  }
}
