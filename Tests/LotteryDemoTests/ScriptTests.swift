import Foundation
import Testing

@testable import LotteryDemo

@Suite @MainActor struct ScriptTests {
  // README.md quotes one step of the scripted session: it must stay what the demo prints.
  @Test func readmeQuotesAStepAsTheDemoPrintsIt() async throws {
    let readme = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("README.md")
    let text = try String(contentsOf: readme, encoding: .utf8)
    let start = try #require(text.range(of: "step of its output:\n\n```\n"))
    let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
    let quoted = text[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    let (_, console) = await runDemo([])
    let head = try #require(quoted.first)
    let first = try #require(console.lines.firstIndex(of: head))
    #expect(Array(console.lines[first...].prefix(quoted.count)) == quoted)
  }

  @Test func scriptedSessionShowsEveryFeature() async throws {
    let (code, console) = await runDemo([])
    #expect(code == 0)
    #expect(console.errors.isEmpty)
    let lines = console.lines
    #expect(
      lines.first == "ChainBind LotteryDemo: a console slot-machine lottery (seed 2024, 5 draws).")
    #expect(lines.filter { $0.hasPrefix("Drawing issue #") }.count == 5)

    // The status line, computed from the rate among others, followed the slider to 0.5.
    let half = try #require(lines.firstIndex(of: "> slide 0.5"))
    #expect(lines[half - 1].contains("the computed status line follow"))
    #expect(
      lines[..<half].last { $0.hasPrefix("| status ") }
        == "| status    last draw lost; 666 wins 1 in 10   |")
    #expect(
      lines[half...].first { $0.hasPrefix("| status ") }
        == "| status    last draw lost; 666 wins 5 in 10   |")

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

    // The remote console's change, made on a background thread, reached the screen only when the
    // main actor delivered it: the screen before shows 0.1, the one after 0.3.
    let remote = try #require(lines.firstIndex(of: "> remote 0.3"))
    #expect(lines[..<remote].last { $0.hasPrefix("| rate ") }?.contains("0.1") == true)
    #expect(
      Array(lines[(remote + 1)...].prefix(3)) == [
        "  (background thread) the remote console sets lottery.winRate = 0.3",
        "  The model holds 0.3; the screen still shows rate 0.1:"
          + " the change waits for the main actor.",
        "  (main actor) the chain delivers the change: the screen shows rate 0.3.",
      ])
    #expect(
      lines[remote...].first { $0.hasPrefix("| rate ") }
        == "| rate      0.3             chance  3 in 10    |")
    #expect(
      lines[remote...].first { $0.hasPrefix("| status ") }
        == "| status    last draw won; 777 wins 3 in 10    |")
    #expect(lines.filter { $0.hasSuffix("(a 3 in 10 chance).") }.count == 2)

    // The history list applied each draw as a change: the 4th draw's row went in at the top and
    // the oldest fell off, and the line under the screen says so.
    let changes = lines.filter { $0.hasPrefix("  history rows: ") }
    #expect(changes.count == 5)
    #expect(changes.first == "  history rows: +#1 at top")
    #expect(changes.contains("  history rows: +#4 at top, -#1 fell off"))
    #expect(
      lines.firstIndex(of: "  history rows: +#4 at top, -#1 fell off").map { lines[$0 - 1] }
        == "+----------------------------------------------+")

    // The history at the end, newest first.
    let history = try #require(lines.firstIndex { $0.hasPrefix("History, newest first: 5 draws") })
    let rows = lines[(history + 1)...].prefix(5)
    #expect(rows.map { $0.split(separator: " ").first } == ["#5", "#4", "#3", "#2", "#1"])
    #expect(rows.contains("  #3    777  win code 777 WIN"))
  }

  @Test func plainOutputHasNoEscapeCodesAndNoDelays() async {
    let (_, console) = await runDemo([])
    #expect(!console.output.contains("\u{1B}"))
    #expect(console.pauses == 0)
  }

  @Test func sameSeedGivesTheSameOutput() async {
    let separate = await runDemo(["--seed", "7"]).console.output
    let attached = await runDemo(["--seed=7"]).console.output
    #expect(separate == attached)
    let byDefault = await runDemo([]).console.output
    let explicit = await runDemo(["--seed", "2024"]).console.output
    #expect(byDefault == explicit)
  }

  @Test func anotherSeedDrawsOtherCodes() async {
    func codes(_ arguments: [String]) async -> [String] {
      await runDemo(arguments).console.lines.filter { $0.hasPrefix("  #") }
    }
    let first = await codes(["--seed", "1"])
    let second = await codes(["--seed", "2"])
    #expect(first != second)
  }

  @Test(arguments: [1, 2, 3, 8])
  func roundsIsTheNumberOfDraws(_ rounds: Int) async {
    let (code, console) = await runDemo(["--rounds", "\(rounds)"])
    #expect(code == 0)
    #expect(console.lines.filter { $0.hasPrefix("Drawing issue #") }.count == rounds)
    // The forced win is always there.
    #expect(console.output.contains("*** WIN! the lamp flashes ***"))
    // So is the remote console's change.
    #expect(console.output.contains("(main actor) the chain delivers the change"))
    #expect(console.output.contains("History, newest first: \(rounds) draw"))
  }
}
