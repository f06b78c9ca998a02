#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the demo writes: the terminal, or a string in the tests.
protocol Console: AnyObject {
  /// Whether to draw with ANSI colours and play the animations (a terminal), or to write plain
  /// text at once (a pipe, a file, `NO_COLOR`, a test).
  var isStyled: Bool { get }
  /// Writes to standard output.
  func write(_ text: String)
  /// Writes to standard error.
  func writeError(_ text: String)
  /// Waits between two frames of an animation; only a styled console is asked to.
  func pause(milliseconds: Int)
}

/// Where the interactive mode reads its commands: standard input, or a string in the tests.
protocol LineReader: AnyObject {
  /// Whether a person types the lines at a terminal, which echoes them.
  var isTerminal: Bool { get }
  /// The next line without its line break, or `nil` at the end of the input.
  func readLine() -> String?
}

/// The process's standard output and error.
///
/// It is styled when standard output is a terminal and `NO_COLOR` is unset (or empty) and `TERM`
/// is not `dumb`.
final class StandardConsole: Console {
  let isStyled: Bool

  /// Creates the console, deciding from the environment whether to style.
  init() {
    isStyled = isatty(1) == 1 && !Self.isSet("NO_COLOR") && Self.value("TERM") != "dumb"
  }

  func write(_ text: String) { writeAll(text, to: 1) }

  func writeError(_ text: String) { writeAll(text, to: 2) }

  func pause(milliseconds: Int) {
    usleep(useconds_t(max(0, milliseconds) * 1000))
  }

  private static func value(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  private static func isSet(_ name: String) -> Bool {
    !(value(name) ?? "").isEmpty
  }
}

// Unbuffered, so output and prompts appear at once and in order, even in a pipe.
private func writeAll(_ text: String, to descriptor: Int32) {
  var text = text
  text.withUTF8 { bytes in
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
      let written = write(descriptor, base + offset, bytes.count - offset)
      if written <= 0 { return }
      offset += written
    }
  }
}

/// The process's standard input.
final class StandardInput: LineReader {
  let isTerminal = isatty(0) == 1

  func readLine() -> String? {
    Swift.readLine(strippingNewline: true)
  }
}
