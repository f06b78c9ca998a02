@testable import LotteryDemo

/// A console that keeps what is written, and counts pauses instead of sleeping.
final class RecordingConsole: Console {
  let isStyled: Bool
  private(set) var output = ""
  private(set) var errors = ""
  private(set) var pauses = 0

  init(styled: Bool = false) {
    isStyled = styled
  }

  func write(_ text: String) { output += text }
  func writeError(_ text: String) { errors += text }
  func pause(milliseconds: Int) { pauses += 1 }

  /// The output's lines.
  var lines: [String] {
    output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }
}

/// Input read from a string, as when commands are piped in.
final class StringInput: LineReader {
  let isTerminal = false
  private var remaining: [String]

  init(_ text: String) {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" { lines.removeLast() }
    remaining = lines
  }

  func readLine() -> String? {
    remaining.isEmpty ? nil : remaining.removeFirst()
  }
}

/// Runs the demo's command line into a recording console.
@MainActor
func runDemo(
  _ arguments: [String], input: String = ""
) async -> (code: Int32, console: RecordingConsole) {
  let console = RecordingConsole()
  let code = await LotteryDemoCLI.run(
    arguments: arguments, console: console, input: StringInput(input))
  return (code, console)
}

/// A session on a recording console.
@MainActor
func makeSession(seed: UInt64 = 2024, styled: Bool = false) -> (LotterySession, RecordingConsole) {
  let console = RecordingConsole(styled: styled)
  return (LotterySession(seed: seed, console: console), console)
}
