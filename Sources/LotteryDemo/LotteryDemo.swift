#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The entry point of `swift run LotteryDemo`: reads the options and plays the lottery.
@main
@MainActor
enum LotteryDemoCLI {
  /// The exit code of a command line that cannot run.
  static let usageErrorCode: Int32 = 2

  // Async, so that the main actor runs its queued jobs (such as a chain's delivery of a change
  // made on another thread) whenever the demo awaits.
  static func main() async {
    let code = await run(
      arguments: Array(CommandLine.arguments.dropFirst()),
      console: StandardConsole(), input: StandardInput())
    exit(code)
  }

  /// Runs the demo with `arguments` (without the program's name) and returns the exit code:
  /// 0, or 2 for a command line that cannot run.
  static func run(arguments: [String], console: Console, input: LineReader) async -> Int32 {
    let options: Options
    do {
      options = try Options(parsing: arguments)
    } catch {
      console.writeError(
        "LotteryDemo: error: \(error)\nRun 'swift run LotteryDemo --help' for the options.\n")
      return usageErrorCode
    }
    if options.showsHelp {
      console.write(Options.help)
      return 0
    }
    let session = LotterySession(seed: options.seed, console: console)
    if options.isInteractive {
      await Interactive.run(session, seed: options.seed, input: input)
    } else {
      await Script.play(session, seed: options.seed, rounds: options.rounds)
    }
    return 0
  }
}
