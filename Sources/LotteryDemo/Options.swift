/// The command-line options of `LotteryDemo`.
struct Options: Equatable {
  /// The seed of the random codes and picks.
  var seed: UInt64 = 2024
  /// The number of draws in the scripted session.
  var rounds = 5
  /// Whether to read commands from standard input instead of playing the script.
  var isInteractive = false
  /// Whether to print the help and exit.
  var showsHelp = false

  /// The largest `--rounds` accepted: enough for any demo, small enough to never run away.
  static let maximumRounds = 1000

  /// Reads the options from the arguments (without the program's name).
  ///
  /// Accepts `--seed N` and `--seed=N` alike.
  ///
  /// - Throws: An ``OptionError`` naming the option and what was wrong with it.
  init(parsing arguments: [String]) throws(OptionError) {
    var remaining = arguments[...]
    var roundsGiven = false
    while let argument = remaining.popFirst() {
      let (name, attached) = Self.split(argument)
      func value() throws(OptionError) -> String {
        if let attached { return attached }
        guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
          throw OptionError("\(name) needs a value")
        }
        return next
      }
      switch name {
      case "--seed":
        let text = try value()
        guard let seed = UInt64(text) else {
          throw OptionError(
            "--seed takes a whole number from 0 to \(UInt64.max), not \(quoted(text))")
        }
        self.seed = seed
      case "--rounds":
        let text = try value()
        guard let rounds = Int(text), (1...Self.maximumRounds).contains(rounds) else {
          throw OptionError(
            "--rounds takes a whole number from 1 to \(Self.maximumRounds), not \(quoted(text))")
        }
        self.rounds = rounds
        roundsGiven = true
      case "--interactive", "-i":
        guard attached == nil else { throw OptionError("\(name) takes no value") }
        isInteractive = true
      case "--help", "-h":
        guard attached == nil else { throw OptionError("\(name) takes no value") }
        showsHelp = true
      default:
        if argument.hasPrefix("-") { throw OptionError("unknown option \(quoted(name))") }
        throw OptionError("unexpected argument \(quoted(argument))")
      }
    }
    if isInteractive && roundsGiven && !showsHelp {
      throw OptionError("--rounds applies to the scripted session, not to --interactive")
    }
  }

  private static func split(_ argument: String) -> (name: String, value: String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }

  /// What `--help` prints.
  static let help = """
    USAGE: LotteryDemo [--seed <n>] [--rounds <n>] [--interactive] [--help]

    The console slot-machine lottery of ChainBind: every value on its screen reaches the
    screen through a ChainBind chain. Without options it plays a scripted session and exits.

    OPTIONS:
      --seed <n>       Seed of the random codes (default 2024). The same seed, the same session.
      --rounds <n>     Draws in the scripted session, 1 to \(maximumRounds) (default 5).
      -i, --interactive
                       Read commands from standard input until 'quit' or the end of input;
                       type 'help' for the commands. Works piped, too:
                         printf 'rate 1\\ndraw\\nquit\\n' | swift run LotteryDemo --interactive
      -h, --help       Show this help.

    Colours and animations are used only when standard output is a terminal and NO_COLOR is
    not set.

    """
}

/// A command line `LotteryDemo` cannot run: names the option and what was wrong with it.
struct OptionError: Error, Equatable, CustomStringConvertible {
  /// What was wrong.
  let description: String

  init(_ description: String) {
    self.description = description
  }
}
