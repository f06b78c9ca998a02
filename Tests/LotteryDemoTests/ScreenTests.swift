import Testing

@testable import LotteryDemo

@Suite @MainActor struct ScreenTests {
  @Test func plainScreenHasNoEscapeCodesAndNoPauses() async {
    let (session, console) = makeSession()
    await session.perform(.rate(1))
    await session.perform(.draw)
    #expect(!console.output.contains("\u{1B}"))
    #expect(console.pauses == 0)
    #expect(console.output.contains("lamp (*) flashing"))
    #expect(console.output.contains("*** WIN! the lamp flashes ***"))
  }

  @Test func everyLineOfTheScreenHasTheSameWidth() async {
    let (session, _) = makeSession()
    await session.perform(.draw, showsScreen: false)
    let lines = session.screen.lines(styled: false)
    #expect(lines.count == 12)
    #expect(Set(lines.map(\.count)) == [48])
  }

  @Test func styledScreenPaintsTheBackgroundAndAnimates() async {
    let (session, console) = makeSession(styled: true)
    await session.perform(.rate(1))
    await session.perform(.draw)
    // issue #2: magenta, white text
    #expect(console.output.contains("\u{1B}[0;97;45m+---"))
    // the lamp blinks on the screen's background
    #expect(console.output.contains("\u{1B}[0;97;45;5;1;93m(*)"))
    // the wheels rolled and the lamp flashed, frame by frame
    #expect(console.output.contains("rolling"))
    #expect(console.pauses > 10)
  }

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
}
