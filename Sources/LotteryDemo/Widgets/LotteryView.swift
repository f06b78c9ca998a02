/// Every widget on the lottery's screen.
///
/// The widgets hold no logic and are never refreshed by hand: `Bindings` wires each one to the
/// model, and the screen only reads them.
@MainActor
final class LotteryView {
  /// The issue number.
  let snLabel = Label()
  /// The background, whose colour follows the issue number.
  let background = Background()
  /// The win rate, as "0.1".
  let rateLabel = Label()
  /// The chance to win, as "1 in 10".
  let chanceLabel = Label()
  /// The win-rate slider.
  let rateSlider = Slider()
  /// The jackpot switch: on is a win rate of 1.0.
  let jackpotSwitch = Switch()
  /// The last code drawn.
  let codeLabel = Label()
  /// The rolling digits of the last code.
  let rollingDisplay = RollingDisplay()
  /// The winning code the next draw uses.
  let winCodeLabel = Label()
  /// The field where the user types the winning code.
  let winCodeField = TextField()
  /// Whether the last draw won, as "true" or "false".
  let isWinLabel = Label()
  /// The lamp that flashes on a win.
  let lamp = Lamp()
  /// The past draws.
  let historyList = HistoryList()
  /// The status line, as "last draw lost; 777 wins 3 in 10".
  let statusLabel = Label()
}
