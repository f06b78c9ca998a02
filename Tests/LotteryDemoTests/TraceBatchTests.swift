import Testing

@testable import LotteryDemo

@Suite @MainActor struct TraceBatchTests {
  @Test func traceAndDrawsParse() throws {
    #expect(try Command.parse("trace on") == .trace(isOn: true))
    #expect(try Command.parse("TRACE off") == .trace(isOn: false))
    #expect(try Command.parse("draws 3") == .drawBatch(3))
    #expect(throws: CommandError.self) { try Command.parse("trace maybe") }
    #expect(throws: CommandError.self) { try Command.parse("draws 1") }
    #expect(throws: CommandError.self) { try Command.parse("draws many") }
    #expect(Command.drawBatch(4).typed == "draws 4")
    #expect(Command.trace(isOn: true).typed == "trace on")
  }

  @Test func traceOnShowsWhatAKeystrokeDid() async {
    let (session, console) = makeSession()
    await session.perform(.trace(isOn: true))
    await session.perform(.type("7"))
    let lines = console.lines
    let key = lines.firstIndex { $0.hasPrefix("  key '7'") }
    let trace = lines.firstIndex { $0.hasPrefix("  trace: Lottery.winCode: ") }
    #expect(key != nil)
    #expect(trace.map { $0 > key ?? .max } == true)
    #expect(lines.contains { $0.hasSuffix("filter 0 rejected \"6667\"") })
    #expect(lines.contains { $0.hasSuffix("reverted TextField.text to \"666\"") })
  }

  @Test func traceOffStopsTheTrace() async {
    let (session, console) = makeSession()
    await session.perform(.trace(isOn: true))
    await session.perform(.trace(isOn: false))
    await session.perform(.slide(0.5))
    #expect(!console.lines.contains { $0.hasPrefix("  trace: ") })
    #expect(console.lines.contains("Tracing off."))
  }

  @Test func drawsInOneBatchChangeTheHistoryOnce() async {
    let (session, console) = makeSession()
    await session.perform(.drawBatch(3))
    #expect(session.lottery.history.map(\.sn) == [3, 2, 1])
    // One change of the list, with the three new rows, not three changes.
    #expect(session.view.historyList.lastChangeText == "+#3 at top, +#2 at 1, +#1 at 2")
    #expect(console.lines.contains("  history rows: +#3 at top, +#2 at 1, +#1 at 2"))
    #expect(session.view.snLabel.text == "4")
  }

  @Test func theRejectionHintComesFromTheChain() async {
    let (session, console) = makeSession()
    await session.perform(.backspace)
    await session.perform(.type("x"))
    #expect(
      console.lines.contains(
        "  key 'x' -> rejected by the filter (digits only, at most 3): the field reverts to [66]"))
    await session.perform(.type("6"))
    #expect(console.lines.contains("  key '6' -> field [666]"))
  }

  @Test func theScriptShowsATraceOnce() async {
    let (_, console) = await runDemo([])
    let traceOn = console.lines.filter { $0 == "> trace on" }
    #expect(traceOn.count == 1)
    #expect(console.lines.contains { $0.hasPrefix("  trace: Lottery.winCode: ") })
  }
}
