/// One thing the user does, as typed in interactive mode or played by the script.
enum Command: Equatable {
  /// Lists the commands.
  case help
  /// Pulls the lever: draws the current issue.
  case draw
  /// Sets the model's win rate directly, as code (or a server) would.
  case rate(Double)
  /// The operator's remote console sets the model's win rate from a background thread.
  case remote(Double)
  /// Drags the rate slider.
  case slide(Double)
  /// Flips the jackpot switch.
  case switchTo(isOn: Bool)
  /// Types characters into the win-code field, one keystroke each.
  case type(String)
  /// Deletes the last character of the win-code field.
  case backspace
  /// Sets the model's winning code directly, as code (or a server) would.
  case winCode(String)
  /// Pulls the lever several times in one `Bind.batch`: the widgets change once.
  case drawBatch(Int)
  /// Turns tracing of every chain on or off: each event of a chain's delivery is printed.
  case trace(isOn: Bool)
  /// Lists the past draws.
  case history
  /// Ends the session.
  case quit

  /// The commands and what they do, for `help`.
  static let summary: [(usage: String, meaning: String)] = [
    ("help", "show this list"),
    ("draw", "pull the lever: draw the next issue"),
    ("rate <0…1>", "set the model's win rate (the widgets follow; draws play whole tenths)"),
    ("remote <0…1>", "set the win rate from a background thread (the operator's console)"),
    ("slide <0…1>", "drag the rate slider"),
    ("switch on|off", "flip the jackpot switch (on: rate 1.0, off: rate 0.1)"),
    ("type <digits>", "type at the end of the win-code field, one key at a time"),
    ("backspace", "delete the last character of the win-code field"),
    ("wincode <code>", "set the model's winning code (at most 3 digits)"),
    ("draws <2…9>", "pull the lever that many times in one batch: the screen changes once"),
    ("trace on|off", "print what each chain does (its events) after every command"),
    ("history", "list the past draws, newest first"),
    ("quit", "leave (end of input works too)"),
  ]

  /// Reads a command from a line; `nil` for a blank line.
  ///
  /// - Throws: A ``CommandError`` that says what was expected.
  static func parse(_ line: String) throws(CommandError) -> Command? {
    // A byte-order mark that an editor put at the start of a command file is not typing.
    let line = line.hasPrefix("\u{FEFF}") ? String(line.dropFirst()) : line
    if let hidden = line.unicodeScalars.first(where: isHidden) {
      throw CommandError(
        "the line holds an invisible character (\(escaped(hidden))): \(quoted(line));"
          + " type the command without it")
    }
    let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
    guard let name = words.first?.lowercased() else { return nil }
    let arguments = Array(words.dropFirst())

    func noArgument(_ command: Command) throws(CommandError) -> Command {
      guard arguments.isEmpty else { throw CommandError("'\(name)' takes no argument") }
      return command
    }
    func oneArgument(expected: String) throws(CommandError) -> String {
      if arguments.count > 1 {
        throw CommandError(
          "'\(name)' takes one argument, \(expected), not \(arguments.count): "
            + quoted(arguments.joined(separator: " ")))
      }
      guard arguments.count == 1 else { throw CommandError("'\(name)' takes \(expected)") }
      return arguments[0]
    }
    func fraction() throws(CommandError) -> Double {
      let expected = "a number from 0 to 1, such as '\(name) 0.5'"
      let text = try oneArgument(expected: expected)
      guard let value = Double(text), value.isFinite, (0.0...1.0).contains(value) else {
        throw CommandError("'\(name)' takes \(expected), not \(quoted(text))")
      }
      // -0 is 0: the rate label would show "-0.0".
      return value == 0 ? 0 : value
    }

    switch name {
    case "help", "?": return try noArgument(.help)
    case "draw": return try noArgument(.draw)
    case "rate": return .rate(try fraction())
    case "remote": return .remote(try fraction())
    case "slide": return .slide(try fraction())
    case "switch":
      let expected = "'on' or 'off', such as 'switch on'"
      switch try oneArgument(expected: expected).lowercased() {
      case "on": return .switchTo(isOn: true)
      case "off": return .switchTo(isOn: false)
      case let other:
        throw CommandError("'switch' takes \(expected), not \(quoted(other))")
      }
    case "type": return .type(try oneArgument(expected: "the digits to type, such as 'type 777'"))
    case "backspace": return try noArgument(.backspace)
    case "wincode":
      return .winCode(
        try oneArgument(expected: "a code of at most 3 digits, such as 'wincode 777'"))
    case "draws":
      let expected = "a count from 2 to 9, such as 'draws 3'"
      let text = try oneArgument(expected: expected)
      guard let count = Int(text), (2...9).contains(count) else {
        throw CommandError("'draws' takes \(expected), not \(quoted(text))")
      }
      return .drawBatch(count)
    case "trace":
      let expected = "'on' or 'off', such as 'trace on'"
      switch try oneArgument(expected: expected).lowercased() {
      case "on": return .trace(isOn: true)
      case "off": return .trace(isOn: false)
      case let other:
        throw CommandError("'trace' takes \(expected), not \(quoted(other))")
      }
    case "history": return try noArgument(.history)
    case "quit", "exit": return try noArgument(.quit)
    default:
      throw CommandError(
        "unknown command \(quoted(words[0])); type 'help' for the list")
    }
  }

  /// Whether the command draws.
  var draws: Bool {
    switch self {
    case .draw, .drawBatch: true
    default: false
    }
  }

  /// The command as the user would type it.
  var typed: String {
    switch self {
    case .help: "help"
    case .draw: "draw"
    case .rate(let value): "rate \(value)"
    case .remote(let value): "remote \(value)"
    case .slide(let value): "slide \(value)"
    case .switchTo(let isOn): "switch \(isOn ? "on" : "off")"
    case .type(let text): "type \(text)"
    case .backspace: "backspace"
    case .winCode(let code): "wincode \(code)"
    case .drawBatch(let count): "draws \(count)"
    case .trace(let isOn): "trace \(isOn ? "on" : "off")"
    case .history: "history"
    case .quit: "quit"
    }
  }
}

/// A line that is not a command, or a command with a bad value: says what was expected.
struct CommandError: Error, Equatable, CustomStringConvertible {
  /// What was wrong and what was expected.
  let description: String

  init(_ description: String) {
    self.description = description
  }
}

/// The longest text an error message quotes whole.
let quotedLimit = 20

/// `text` in quotes, as an error message echoes it: cut after ``quotedLimit`` characters, with
/// its length, when it is longer, so that a pasted page does not fill the screen again.
///
/// - Parameter text: What the user typed.
/// - Returns: `'text'`, or `'first 20 characters…' (5000 characters)`.
func quoted(_ text: String) -> String {
  guard text.count > quotedLimit else { return "'\(visible(text))'" }
  return "'\(visible(String(text.prefix(quotedLimit))))…' (\(text.count) characters)"
}

/// Whether `scalar` shows nothing where it is typed: a control character other than white
/// space (NUL, escape), or a format character (a zero-width space or joiner, a byte-order mark).
func isHidden(_ scalar: Unicode.Scalar) -> Bool {
  switch scalar.properties.generalCategory {
  case .control: !scalar.properties.isWhitespace
  case .format: true
  default: false
  }
}

/// `scalar` as a message names it: `U+200B`.
func escaped(_ scalar: Unicode.Scalar) -> String {
  let hex = String(scalar.value, radix: 16, uppercase: true)
  return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}

/// `text` with every invisible character shown as `<U+200B>`, so that an echo or a message
/// never sends the terminal an escape sequence and never hides what made a line wrong.
func visible(_ text: String) -> String {
  guard text.unicodeScalars.contains(where: isHidden) else { return text }
  var shown = ""
  for scalar in text.unicodeScalars {
    if isHidden(scalar) {
      shown += "<\(escaped(scalar))>"
    } else {
      shown.unicodeScalars.append(scalar)
    }
  }
  return shown
}
