import Testing

@testable import LotteryDemo

@Suite struct ScriptTests {
  @Test func scriptedSessionShowsEveryFeature() throws {
    let (code, console) = runDemo([])
    #expect(code == 0)
    #expect(console.errors.isEmpty)
    let lines = console.lines
    #expect(
      lines.first == "ChainBind LotteryDemo: a console slot-machine lottery (seed 2024, 5 draws).")
    #expect(lines.filter { $0.hasPrefix("Drawing issue #") }.count == 5)

    // The slider at 1.0 turned the switch on.
    let slide = try #require(lines.firstIndex(of: "> slide 1.0"))
    #expect(lines[slide...].first { $0.contains("switch  ") }?.contains("[on ]") == true)

    // The 4th digit was rejected and the field went back to 777.
    #expect(
      lines.contains(
        "  key '7' -> rejected by the filter (digits only, at most 3): the field reverts to [777]"))

    // The switch forced a win at rate 1.0.
    let win = try #require(lines.firstIndex { $0.hasSuffix("a certain win.") })
    let afterWin = lines[win...]
    #expect(afterWin.contains("| rate      1.0             chance  10 in 10   |"))
    #expect(afterWin.first { $0.contains("code      ") }?.contains("777") == true)
    #expect(afterWin.first { $0.contains("won     ") }?.contains("true") == true)
    #expect(afterWin.contains("  *** WIN! the lamp flashes ***"))

    // The history at the end, newest first.
    let history = try #require(lines.firstIndex { $0.hasPrefix("History, newest first: 5 draws") })
    let rows = lines[(history + 1)...].prefix(5)
    #expect(rows.map { $0.split(separator: " ").first } == ["#5", "#4", "#3", "#2", "#1"])
    #expect(rows.contains("  #3    777  win code 777 WIN"))
  }

  @Test func plainOutputHasNoEscapeCodesAndNoDelays() {
    let (_, console) = runDemo([])
    #expect(!console.output.contains("\u{1B}"))
    #expect(console.pauses == 0)
  }

  @Test func sameSeedGivesTheSameOutput() {
    #expect(runDemo(["--seed", "7"]).console.output == runDemo(["--seed=7"]).console.output)
    #expect(runDemo([]).console.output == runDemo(["--seed", "2024"]).console.output)
  }

  @Test func anotherSeedDrawsOtherCodes() {
    func codes(_ arguments: [String]) -> [String] {
      runDemo(arguments).console.lines.filter { $0.hasPrefix("  #") }
    }
    #expect(codes(["--seed", "1"]) != codes(["--seed", "2"]))
  }

  @Test(arguments: [1, 2, 3, 8])
  func roundsIsTheNumberOfDraws(_ rounds: Int) {
    let (code, console) = runDemo(["--rounds", "\(rounds)"])
    #expect(code == 0)
    #expect(console.lines.filter { $0.hasPrefix("Drawing issue #") }.count == rounds)
    // The forced win is always there.
    #expect(console.output.contains("*** WIN! the lamp flashes ***"))
    #expect(console.output.contains("History, newest first: \(rounds) draw"))
  }
}
