/// The scripted session that `swift run LotteryDemo` plays: every kind of binding at work.
///
/// Each step says what the user does, shows the command an interactive user would type, and
/// presents the screen that results.
@MainActor
enum Script {
  /// One step: what the user does, and the commands that do it.
  struct Step {
    /// What the user does and what to watch for.
    let narration: String
    /// The commands, performed in order; the screen is presented after the last.
    let commands: [Command]
  }

  /// The steps of a session with `rounds` draws in all (at least 1).
  ///
  /// Up to two draws come before the switch forces a win, and the rest after it.
  static func steps(rounds: Int) -> [Step] {
    let early = min(2, max(rounds, 1) - 1)
    let late = max(rounds, 1) - 1 - early
    var steps = [
      Step(narration: "The lottery opens. Every widget already shows the model.", commands: [])
    ]
    if early >= 1 {
      steps.append(
        Step(narration: "The user pulls the lever (a 1 in 10 chance).", commands: [.draw]))
    }
    steps.append(
      Step(
        narration:
          "The user drags the slider to 0.5: the rate label, the chance and the computed status"
          + " line follow.",
        commands: [.slide(0.5)]))
    if early >= 2 {
      steps.append(
        Step(narration: "The user pulls the lever (a 5 in 10 chance).", commands: [.draw]))
    }
    steps += [
      Step(
        narration: "The user drags the slider to 1.0: the switch turns itself on.",
        commands: [.slide(1.0)]),
      Step(
        narration: "The user turns the switch off: the rate goes back to 0.1, and the slider too.",
        commands: [.switchTo(isOn: false)]),
      Step(
        narration: "The user clears the win-code field: draws fall back to 666.",
        commands: [.backspace, .backspace, .backspace]),
      Step(
        narration: "The user types 7777, key by key: the filter rejects the 4th digit.",
        commands: [.type("7777")]),
      Step(
        narration:
          "With tracing on, the user deletes the last digit and types it again: the trace shows"
          + " what each keystroke did.",
        commands: [.trace(isOn: true), .backspace, .type("7"), .trace(isOn: false)]),
      Step(
        narration: "The user turns the switch on: the rate is 1.0, every slot holds 777.",
        commands: [.switchTo(isOn: true)]),
      Step(narration: "The user pulls the lever: a certain win.", commands: [.draw]),
      Step(
        narration: "The user turns the switch off. The lamp keeps flashing until the next draw.",
        commands: [.switchTo(isOn: false)]),
      Step(
        narration:
          "The operator's remote console sets the win rate to 0.3, from a background thread.",
        commands: [.remote(0.3)]),
    ]
    for _ in 0..<late {
      steps.append(
        Step(narration: "The user pulls the lever (a 3 in 10 chance).", commands: [.draw]))
    }
    steps.append(Step(narration: "The user opens the history.", commands: [.history]))
    return steps
  }

  /// Plays the session on `session`'s console.
  static func play(_ session: LotterySession, seed: UInt64, rounds: Int) async {
    let steps = steps(rounds: rounds)
    session.say(
      "ChainBind LotteryDemo: a console slot-machine lottery"
        + " (seed \(seed), \(rounds) draw\(rounds == 1 ? "" : "s")).\n"
        + "Every value on the screen gets there through a ChainBind chain.\n")
    for (number, step) in steps.enumerated() {
      session.say("\nStep \(number + 1) of \(steps.count). \(step.narration)\n")
      if step.commands.isEmpty {
        session.presentScreen()
      }
      for (index, command) in step.commands.enumerated() {
        session.say("> \(command.typed)\n")
        await session.perform(command, showsScreen: index == step.commands.count - 1)
      }
    }
  }
}
