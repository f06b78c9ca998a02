/// The lottery's behaviour: it draws, writes the outcome into the model, and words the status.
///
/// It never touches a widget. The chains in `Bindings` take each change of the model to the
/// screen, so a draw is four assignments and nothing else.
final class LotteryViewModel {
  /// The model the widgets are bound to.
  let lottery: Lottery
  private var generator: SplitMix64

  /// Creates a view model whose random codes and picks follow `seed`.
  init(lottery: Lottery = Lottery(), seed: UInt64) {
    self.lottery = lottery
    self.generator = SplitMix64(seed: seed)
  }

  /// The status line: how the last draw went and what the next one plays for, as
  /// "last draw lost; 777 wins 3 in 10".
  ///
  /// A plain computed property: the chain bound to it observes the model's properties it reads,
  /// and sends only when the sentence changes. It reads nothing but the model, because the chain
  /// re-reads it on the thread that changed the model (the remote console's, too).
  var status: String {
    let last = lottery.history.first.map { $0.isWin ? "last draw won" : "last draw lost" }
    let winCode = SlotMachine.effectiveWinCode(lottery.winCode)
    return "\(last ?? "no draw yet"); \(winCode) wins \(Self.chance(forRate: lottery.winRate))"
  }

  /// The rate a draw plays at `rate`, as the rate label shows it: whole tenths, rounded down
  /// as the draw rule rounds, so that the label always agrees with the chance ("0.9" at 0.99).
  static func rateShown(forRate rate: Double) -> String {
    let slots = SlotMachine.winningSlotCount(forRate: rate)
    return "\(slots / SlotMachine.slotCount).\(slots % SlotMachine.slotCount)"
  }

  /// The chance to win at `rate`, as "3 in 10".
  static func chance(forRate rate: Double) -> String {
    "\(SlotMachine.winningSlotCount(forRate: rate)) in \(SlotMachine.slotCount)"
  }

  /// Draws the current issue: fills the slots, picks one uniformly, and updates the model.
  @discardableResult
  func draw() -> Draw {
    let machine = SlotMachine(
      winRate: lottery.winRate, winCode: lottery.winCode, using: &generator)
    return draw(machine.slots[machine.pick(using: &generator)], winCode: machine.winCode)
  }

  /// Draws the current issue with a slot chosen by the caller instead of at random.
  ///
  /// The draw rule's tests use it to go through all ten slots.
  @discardableResult
  func draw(pickingSlot index: Int) -> Draw {
    let machine = SlotMachine(
      winRate: lottery.winRate, winCode: lottery.winCode, using: &generator)
    return draw(machine.slots[index], winCode: machine.winCode)
  }

  private func draw(_ code: String, winCode: String) -> Draw {
    let draw = Draw(sn: lottery.sn, code: code, winCode: winCode)
    lottery.sn += 1
    lottery.code = code
    lottery.isWin = draw.isWin
    lottery.record(draw)
    return draw
  }
}
