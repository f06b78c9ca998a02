/// Draws the widgets as text: a framed screen, plain or in ANSI colours, and the animations.
///
/// It only reads the widgets. What they show was put there by the chains in `Bindings`.
@MainActor
struct Screen {
  /// The widgets drawn.
  let view: LotteryView

  private static let innerWidth = 44
  private static let leftColumn = 26
  private static let nameWidth = 10

  /// The framed screen, one string per line, without line breaks.
  func lines(styled: Bool) -> [String] {
    let base = view.background.color.ansiParameters
    let rows: [StyledText] = [
      titleRow(base: base),
      StyledText(),
      wheelsRow(base: base),
      StyledText(),
      row(cell("code", view.codeLabel.text), cell("won", view.isWinLabel.text, name: 8)),
      row(cell("win code", view.winCodeLabel.text), cell("field", fieldText, name: 8)),
      row(cell("rate", view.rateLabel.text), cell("chance", view.chanceLabel.text, name: 8)),
      row(cell("slider", sliderText), cell("switch", switchText, name: 8)),
      cell("history", historySummary),
      cell("status", view.statusLabel.text),
    ]
    let border = "+" + String(repeating: "-", count: Self.innerWidth + 2) + "+"
    let framed =
      [StyledText(border)]
      + rows.map { StyledText("| ") + $0.padded(to: Self.innerWidth) + StyledText(" |") }
      + [StyledText(border)]
    return framed.map { line in
      styled ? "\u{1B}[0;\(base)m" + line.ansi + StyledText.reset : line.plain
    }
  }

  /// Writes the screen to `console`.
  ///
  /// On a styled console the wheels roll to a new code before the screen appears, and the lamp
  /// flashes under it after a win; on a plain one the screen is written at once.
  func present(on console: Console) {
    if view.rollingDisplay.isRolling {
      if console.isStyled { playRoll(on: console) }
      view.rollingDisplay.finishRolling()
    }
    console.write(lines(styled: console.isStyled).joined(separator: "\n") + "\n")
    if view.lamp.hasNewFlash {
      playFlash(on: console)
      view.lamp.finishNewFlash()
    }
  }

  /// Every past draw in `draws` (the model's full log, newest first), one row each as the
  /// history list words it.
  static func historyText(_ draws: [Draw]) -> String {
    guard !draws.isEmpty else { return "History: no draws yet.\n" }
    let wins = draws.filter(\.isWin).count
    let title =
      "History, newest first: \(draws.count) draw\(draws.count == 1 ? "" : "s"), "
      + "\(wins) win\(wins == 1 ? "" : "s")\n"
    return title + draws.map { "  " + HistoryList.row(for: $0) + "\n" }.joined()
  }

  // MARK: Rows

  private func titleRow(base: String) -> StyledText {
    let title =
      StyledText("LOTTERY", style: "1", base: base)
      + StyledText("  next issue #\(view.snLabel.text)")
    let color = StyledText("background \(view.background.color.name)")
    return title.padded(to: Self.innerWidth - color.count) + color
  }

  private func wheelsRow(base: String) -> StyledText {
    let wheels = wheelsText(view.rollingDisplay.wheels, base: base)
    let lamp = StyledText("lamp ") + lampText(base: base)
    return (StyledText("   ") + wheels).padded(to: Self.leftColumn) + lamp
  }

  private func row(_ left: StyledText, _ right: StyledText) -> StyledText {
    left.padded(to: Self.leftColumn) + right
  }

  private func cell(_ name: String, _ value: String, name width: Int = nameWidth) -> StyledText {
    StyledText(name.padded(to: width) + value)
  }

  // MARK: Widgets

  private func wheelsText(_ wheels: [Character], base: String) -> StyledText {
    wheels.reduce(StyledText()) { text, digit in
      text + StyledText("[ \(digit) ]", style: "1;30;47", base: base)
    }
  }

  private func lampText(base: String) -> StyledText {
    let lamp = view.lamp
    if lamp.isDark { return StyledText("( )") }
    let bulb = StyledText("(*)", style: lamp.isFlashing ? "5;1;93" : "1;93", base: base)
    return lamp.isFlashing ? bulb + StyledText(" flashing") : bulb
  }

  private var fieldText: String {
    "[" + view.winCodeField.text.padded(to: 3, with: "_") + "]"
  }

  private var sliderText: String {
    let position = Int((view.rateSlider.value * 10).rounded())
    return "[" + String(repeating: "=", count: position) + "o"
      + String(repeating: "-", count: 10 - position) + "]"
  }

  private var switchText: String {
    view.jackpotSwitch.isOn ? "[on ]" : "[off]"
  }

  private var historySummary: String {
    let draws = view.historyList.draws
    guard !draws.isEmpty else { return "no draws yet" }
    var summary = ""
    for draw in draws.prefix(3) {
      let entry = "#\(draw.sn) \(draw.code)" + (draw.isWin ? " WIN" : "")
      let next = summary.isEmpty ? entry : summary + "  " + entry
      if next.count > Self.innerWidth - Self.nameWidth { break }
      summary = next
    }
    return summary
  }

  // MARK: Animations

  private func playRoll(on console: Console) {
    let base = view.background.color.ansiParameters
    let target = view.rollingDisplay.wheels
    let stops = [6, 10, 14]
    for frame in 0...stops[2] {
      let wheels = zip(target, stops).map { digit, stop -> Character in
        guard frame < stop, let value = digit.wholeNumberValue else { return digit }
        return Character(String((value - (stop - frame) + 100) % 10))
      }
      let line = StyledText("   rolling  ") + wheelsText(wheels, base: base)
      console.write("\r\u{1B}[2K\u{1B}[0;\(base)m" + line.ansi + StyledText.reset)
      console.pause(milliseconds: 45)
    }
    console.write("\r\u{1B}[2K")
  }

  private func playFlash(on console: Console) {
    let banner = "*** WIN! the lamp flashes ***"
    guard console.isStyled else {
      console.write("  \(banner)\n")
      return
    }
    for flash in 0..<7 {
      let style = flash.isMultiple(of: 2) ? "1;30;103" : "2;93"
      console.write("\r\u{1B}[2K  \u{1B}[\(style)m\(banner)\(StyledText.reset)")
      console.pause(milliseconds: 110)
    }
    console.write("\n")
  }
}

extension String {
  /// The string followed by `pad` up to `length` characters.
  func padded(to length: Int, with pad: Character = " ") -> String {
    count >= length ? self : self + String(repeating: pad, count: length - count)
  }
}
