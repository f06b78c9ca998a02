import ChainBind

/// A horizontal slider from 0 to 1 that the user drags.
@MainActor
final class Slider: ControlEventSource {
  /// What the slider tells its chains.
  enum Event { case valueChanged }

  nonisolated let controlEvents = ControlEvents<Event>()
  /// The thumb's position, from 0 to 1.
  var value = 0.0

  /// The user drags the thumb to `position`, kept within 0…1.
  func slide(to position: Double) {
    value = min(max(position, 0), 1)
    controlEvents.send(.valueChanged)
  }
}
