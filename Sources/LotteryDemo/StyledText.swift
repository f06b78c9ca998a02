/// Text with a plain spelling and an ANSI-coloured one, so both lay out to the same width.
///
/// The plain spelling is what a pipe, a file or `NO_COLOR` gets; the ANSI one adds SGR escape
/// codes around some parts. Widths are counted on the plain spelling.
struct StyledText {
  /// The text without escape codes.
  private(set) var plain: String
  /// The text with escape codes.
  private(set) var ansi: String

  /// Unstyled text.
  init(_ text: String = "") {
    plain = text
    ansi = text
  }

  /// `text` drawn in the line's `base` style changed by the SGR parameters `style`, then back
  /// to `base`.
  init(_ text: String, style: String, base: String) {
    plain = text
    ansi = "\u{1B}[0;\(base);\(style)m\(text)\u{1B}[0;\(base)m"
  }

  /// The number of characters on screen.
  var count: Int { plain.count }

  /// The text followed by spaces up to `length` characters.
  func padded(to length: Int) -> StyledText {
    self + StyledText(String(repeating: " ", count: max(0, length - count)))
  }

  /// The spelling to write.
  func text(styled: Bool) -> String {
    styled ? ansi : plain
  }

  /// The two texts one after the other.
  static func + (lhs: StyledText, rhs: StyledText) -> StyledText {
    var joined = lhs
    joined.plain += rhs.plain
    joined.ansi += rhs.ansi
    return joined
  }

  /// The escape code that resets every style.
  static let reset = "\u{1B}[0m"
}
