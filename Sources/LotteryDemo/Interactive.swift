/// The interactive mode: commands read from standard input until `quit` or the end of input.
///
/// It works typed by hand at a terminal (a prompt, the terminal echoes the line) and piped (each
/// command is echoed after the prompt so the transcript reads like a session).
@MainActor
enum Interactive {
  /// Runs commands from `input` on `session` until `quit` or the end of the input.
  static func run(_ session: LotterySession, seed: UInt64, input: LineReader) async {
    session.say(
      "ChainBind LotteryDemo, interactive (seed \(seed)). Type 'help' for the commands.\n")
    session.presentScreen()
    while true {
      session.say("lottery> ")
      guard let line = input.readLine() else {
        session.say("\n(end of input) Bye.\n")
        return
      }
      if !input.isTerminal { session.say(visible(line) + "\n") }
      do {
        guard let command = try Command.parse(line) else { continue }
        if !(await session.perform(command)) { return }
      } catch {
        session.complain(error)
      }
    }
  }
}
