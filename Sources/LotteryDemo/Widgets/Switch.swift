import ChainBind

/// An on/off switch the user flips.
@MainActor
final class Switch: ControlEventSource {
  /// What the switch tells its chains.
  enum Event { case valueChanged }

  nonisolated let controlEvents = ControlEvents<Event>()
  /// Whether the switch is on.
  var isOn = false

  /// The user flips the switch to `on`; flipping it to where it already is does nothing.
  ///
  /// - Returns: Whether the switch moved (and so sent `.valueChanged`).
  @discardableResult
  func turn(on: Bool) -> Bool {
    guard on != isOn else { return false }
    isOn = on
    controlEvents.send(.valueChanged)
    return true
  }
}
