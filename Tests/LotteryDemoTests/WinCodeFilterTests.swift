import Testing

@testable import LotteryDemo

@Suite @MainActor struct WinCodeFilterTests {
  @Test func fourthDigitIsRejectedAndTheFieldReverts() {
    let (session, _) = makeSession()
    let field = session.view.winCodeField
    for _ in 0..<3 { field.deleteBackward() }
    #expect(field.text.isEmpty && session.lottery.winCode.isEmpty)

    for key in "777" { field.type(key) }
    #expect(session.lottery.winCode == "777")
    #expect(session.view.winCodeLabel.text == "777")

    field.type("7")
    #expect(field.text == "777")
    #expect(session.lottery.winCode == "777")
    #expect(session.view.winCodeLabel.text == "777")
  }

  @Test func aKeyInAFullFieldRevertsAtOnce() {
    let (session, _) = makeSession()
    session.view.winCodeField.type("1")
    #expect(session.view.winCodeField.text == "666")
    #expect(session.lottery.winCode == "666")
  }

  @Test func aNonDigitIsRejected() {
    let (session, _) = makeSession()
    let field = session.view.winCodeField
    field.deleteBackward()
    field.type("x")
    #expect(field.text == "66")
    #expect(session.lottery.winCode == "66")
  }

  @Test func modelSetsAreFilteredToo() async {
    let (session, console) = makeSession()
    await session.perform(.winCode("1234"), showsScreen: false)
    #expect(session.lottery.winCode == "666")
    #expect(session.view.winCodeField.text == "666")
    #expect(console.output.contains("rejected by the filter"))
    await session.perform(.winCode("42"), showsScreen: false)
    #expect(session.view.winCodeField.text == "42")
  }

  @Test func anEmptyFieldShowsTheFallbackWinCode() async {
    let (session, _) = makeSession()
    for _ in 0..<3 { await session.perform(.backspace, showsScreen: false) }
    #expect(session.lottery.winCode == "")
    #expect(session.view.winCodeLabel.text == "666")
  }

  @Test func typeCommandReportsEachKeyAndTheScreenShowsTheRevertedField() async {
    let (session, console) = makeSession()
    for _ in 0..<3 { await session.perform(.backspace, showsScreen: false) }
    let before = console.output.count
    await session.perform(.type("7777"))
    let lines = console.output.dropFirst(before).split(separator: "\n").map(String.init)
    #expect(
      Array(lines.prefix(4)) == [
        "  key '7' -> field [7]",
        "  key '7' -> field [77]",
        "  key '7' -> field [777]",
        "  key '7' -> rejected by the filter (digits only, at most 3):"
          + " the field reverts to [777]",
      ])
    #expect(lines.contains { $0.contains("field   [777]") })
  }
}
