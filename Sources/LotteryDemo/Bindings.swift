import ChainBind
import Foundation

/// The one place where the model meets the widgets.
///
/// Every value on the screen gets there through one of these chains, and every edit the user
/// makes gets back to the model through them. Nothing else in the demo copies a value into a
/// widget.
///
/// It runs on the main actor, as a view controller's setup would, so every chain it builds is
/// isolated to the main actor: a change made on another thread reaches the widgets on it.
@MainActor
enum Bindings {
  /// The chains `connect` made that the session uses.
  struct Chains {
    /// The win rate's chain, whose values the remote console waits for.
    let rate: Chain<Double>
    /// Sets (or, with `nil`, removes) one tracer on every chain.
    let trace: (((ChainEvent) -> Void)?) -> Void
  }

  /// Binds every widget of `view` to `viewModel` and its model.
  ///
  /// The chains hold neither the model nor the widgets: they live as long as the model does and
  /// drop a widget the moment it is deallocated.
  ///
  /// - Parameters:
  ///   - viewModel: The view model, and through it the model.
  ///   - view: The widgets.
  ///   - onWinCodeRejected: Called with a code the win-code filter rejected, after the field
  ///     went back to the last accepted one.
  /// - Returns: The chains the session uses.
  @discardableResult
  static func connect(
    _ viewModel: LotteryViewModel, to view: LotteryView,
    onWinCodeRejected: @escaping (String) -> Void = { _ in }
  ) -> Chains {
    let lottery = viewModel.lottery
    // The issue number: Int -> String for the label (automatic conversion), and a colour for the
    // background (a conversion of our own).
    let sn = Bind.inout(lottery, \.sn)
      .out(view.snLabel, \.text)
      .out(view.background, \.color, convert: { BackgroundColor(issue: $0) })

    // The win rate, shown twice and edited two ways. The slider sends on .valueChanged; the
    // switch reads "rate is 1.0" and writes 1.0 (on) or 0.1 (off), so the slider at exactly 1.0
    // turns the switch on and the switch moves the slider. One chain: no loop, no echo.
    let rate = Bind.inout(lottery, \.winRate)
      .out(view.rateLabel, \.text, convert: { LotteryViewModel.rateShown(forRate: $0) })
      .out(view.chanceLabel, \.text, convert: { LotteryViewModel.chance(forRate: $0) })
      .inout(view.rateSlider, \.value, on: .valueChanged)
      .inout(
        view.jackpotSwitch, \.isOn, on: .valueChanged,
        convert: { $0 == 1.0 }, back: { $0 ? 1.0 : 0.1 }
      )
      .filter { (0.0...1.0).contains($0) }

    // The last code: a label (nil before the first draw) and the rolling wheels. The wheels
    // are a sink owned by the display, called on every draw, so the same code twice still
    // rolls; the chain hands it the display (held weakly), so the closure captures nothing.
    let code = Bind.inout(lottery, \.code)
      .out(view.codeLabel, \.text, convert: { $0 ?? "---" })
      .out(view.rollingDisplay, key: "roll") { display, code in display.roll(to: code) }

    // The winning code: the label, and the text field the user types into. The filter rejects
    // a 4th digit (or anything else: a digit with an accent or a joiner is not a digit), and
    // the field goes back to the last accepted code; then
    // `onReject` tells the session, which shows the user why.
    let winCode = Bind.inout(lottery, \.winCode)
      .out(view.winCodeLabel, \.text, convert: { SlotMachine.effectiveWinCode($0) })
      .inout(view.winCodeField, \.text, on: .editingChanged)
      .filter { SlotMachine.isWinCode($0) }
      .onReject(onWinCodeRejected)

    // The outcome: a label (Bool -> String), the lamp (lit when won: negated into isDark), and a
    // sink owned by the lamp that starts or stops the flashing.
    let isWin = Bind.inout(lottery, \.isWin)
      .out(view.isWinLabel, \.text)
      .out(view.lamp, \.isDark, negated: true)
      .out(view.lamp, key: "flash") { lamp, isWin in
        if isWin { lamp.startFlashing() } else { lamp.stopFlashing() }
      }

    // The history is read-only outside the model, so it is an `in` head: it sends, never receives.
    // The list applies each change row by row (draws matched by issue number): a new draw is
    // inserted at the top, and the oldest falls off the end.
    let history = Bind.in(lottery, \.history)
      .outChanges(view.historyList, key: "rows") { list, change in list.apply(change) }

    // The status line is a computed property of the view model: the chain observes the history,
    // the rate and the win code it reads, so no code recomputes it after a draw or an edit. Bound
    // last: binding one of those properties afterwards would hide its changes from this chain.
    let status = Bind.in(viewModel, \.status)
      .out(view.statusLabel, \.text)
    return Chains(rate: rate) { tracer in
      if let tracer {
        sn.trace(tracer)
        rate.trace(tracer)
        code.trace(tracer)
        winCode.trace(tracer)
        isWin.trace(tracer)
        history.trace(tracer)
        status.trace(tracer)
      } else {
        sn.removeTrace()
        rate.removeTrace()
        code.removeTrace()
        winCode.removeTrace()
        isWin.removeTrace()
        history.removeTrace()
        status.removeTrace()
      }
    }
  }
}
