import ChainBind

/// One run of the lottery: the model, its view model, the widgets and the chains between them.
///
/// It performs commands the way a user would: `slide` drags the slider, `type` presses keys in
/// the field, `draw` asks the view model to draw. Then it presents the screen. It never copies a
/// value into a widget; the chains set up once in `init` do.
///
/// It is main-actor code, like the widgets: the chains it sets up are isolated to the main actor,
/// so a change made on another thread reaches the widgets later, on the main actor.
@MainActor
final class LotterySession {
  /// The draw logic and the model.
  let viewModel: LotteryViewModel
  /// The widgets.
  let view = LotteryView()
  private let console: Console
  private var chains: Bindings.Chains?
  // The code the win-code filter rejected last, told by the chain's `onReject`.
  private var rejectedCode: String?
  // Set by `trace on`: each chain's events, printed after the command that caused them.
  private var traceLines: [String]?

  /// Creates the session and binds the widgets to the model.
  init(seed: UInt64, console: Console) {
    self.viewModel = LotteryViewModel(seed: seed)
    self.console = console
    chains = Bindings.connect(viewModel, to: view) { [weak self] code in
      self?.rejectedCode = code
    }
  }

  /// The model.
  var lottery: Lottery { viewModel.lottery }

  /// The screen that draws the widgets.
  var screen: Screen { Screen(view: view) }

  /// Does what `command` says, reports it, and presents the screen when anything can have changed.
  ///
  /// - Parameters:
  ///   - command: What the user does.
  ///   - showsScreen: Whether to present the screen afterwards; the script groups a few
  ///     commands under one screen.
  /// - Returns: `false` for `quit`.
  @discardableResult
  func perform(_ command: Command, showsScreen: Bool = true) async -> Bool {
    switch command {
    case .help:
      say(Self.helpText)
      return true
    case .history:
      say(Screen.historyText(lottery.log))
      return true
    case .quit:
      say("Bye.\n")
      return false
    case .draw:
      say("Drawing issue #\(view.snLabel.text)...\n")
      viewModel.draw()
    case .drawBatch(let count):
      say("Drawing \(count) issues from #\(view.snLabel.text) in one batch...\n")
      // Every draw changes the model at once; each chain delivers once, after the last draw:
      // the history list gets one change with every new row.
      Bind.batch {
        for _ in 0..<count { viewModel.draw() }
      }
    case .trace(let isOn):
      setTracing(isOn)
      return true
    case .rate(let rate):
      say("The model sets winRate = \(rate); the widgets follow.\n")
      lottery.winRate = rate
    case .remote(let rate):
      await setRateFromRemoteConsole(rate)
    case .slide(let position):
      view.rateSlider.slide(to: position)
    case .switchTo(let isOn):
      if !view.jackpotSwitch.turn(on: isOn) {
        say("The switch is already \(isOn ? "on" : "off").\n")
      }
    case .type(let text):
      text.forEach(press)
    case .backspace:
      pressBackspace()
    case .winCode(let code):
      lottery.winCode = code
      if lottery.winCode != code {
        say(
          "The model's winCode was set to \(quoted(code)): rejected by the filter"
            + " (digits only, at most 3);"
            + " it stays '\(lottery.winCode)'.\n")
      }
    }
    printTrace()
    if showsScreen {
      presentScreen()
      if command.draws, !view.historyList.lastChangeText.isEmpty {
        say("  history rows: \(view.historyList.lastChangeText)\n")
      }
    }
    return true
  }

  // `trace on`: every chain hands its events to the session, which prints them after the
  // command that caused them.
  private func setTracing(_ isOn: Bool) {
    guard isOn != (traceLines != nil) else {
      say("Tracing is already \(isOn ? "on" : "off").\n")
      return
    }
    if isOn {
      traceLines = []
      chains?.trace { [weak self] event in self?.traceLines?.append(Self.traceLine(event)) }
      say("Tracing on: after each command, what every chain did.\n")
    } else {
      chains?.trace(nil)
      traceLines = nil
      say("Tracing off.\n")
    }
  }

  // The event without its chain's number, which depends on how many chains the process made
  // before: the same session prints the same lines.
  private static func traceLine(_ event: ChainEvent) -> String {
    let code = "\(event.code)"
    return String(code.prefix { $0 != "#" } + event.description.dropFirst(code.count))
  }

  private func printTrace() {
    guard let lines = traceLines, !lines.isEmpty else { return }
    traceLines = []
    say(lines.map { "  trace: \($0)\n" }.joined())
  }

  /// Presents the screen as the widgets show it now.
  func presentScreen() {
    screen.present(on: console)
  }

  /// The list of commands.
  static var helpText: String {
    let width = Command.summary.map(\.usage.count).max() ?? 0
    return "Commands:\n"
      + Command.summary.map { "  \($0.usage.padded(to: width))  \($0.meaning)\n" }.joined()
  }

  /// Writes a line (or several) to the console.
  func say(_ text: String) {
    console.write(text)
  }

  /// Writes an error to the console, on standard output: in a session it is part of the dialog.
  func complain(_ error: CommandError) {
    console.write("! \(error.description)\n")
  }

  // The change is made on another thread, so the chain queues it for the main actor, which this
  // code holds: the screen changes only once it awaits the delivery.
  private func setRateFromRemoteConsole(_ rate: Double) async {
    let lottery = self.lottery
    // The chain Bindings made, not `Bind.inout(lottery, \.winRate)` again: joining winRate anew
    // would stop the status line, which reads it, from seeing its changes.
    // A subscription to the chain's values, made before the change: it yields the current value
    // at once, then the next value the chain delivers, on the main actor (this code's executor).
    var values = chains?.rate.values.makeAsyncIterator()
    _ = await values?.next()
    say("  (background thread) the remote console sets lottery.winRate = \(rate)\n")
    RemoteConsole.run { lottery.winRate = rate }
    say(
      "  The model holds \(lottery.winRate); the screen still shows rate \(view.rateLabel.text):"
        + " the change waits for the main actor.\n")
    _ = await values?.next()
    say(
      "  (main actor) the chain delivers the change:"
        + " the screen shows rate \(view.rateLabel.text).\n")
  }

  private func press(_ key: Character) {
    let field = view.winCodeField
    rejectedCode = nil
    field.type(key)
    // The chain's `onReject` says whether the filter rejected the key.
    if rejectedCode == nil {
      say("  key '\(key)' -> field [\(field.text)]\n")
    } else {
      say(
        "  key '\(key)' -> rejected by the filter (digits only, at most 3):"
          + " the field reverts to [\(field.text)]\n")
    }
    printTrace()
  }

  private func pressBackspace() {
    let field = view.winCodeField
    guard !field.text.isEmpty else {
      say("  backspace -> the field is already empty\n")
      return
    }
    field.deleteBackward()
    say("  backspace -> field [\(field.text)]\n")
    printTrace()
  }
}
