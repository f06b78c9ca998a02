import ChainBind

/// A one-line text field the user types into, a keystroke at a time.
///
/// Each keystroke is a user edit, so the field sends `.editingChanged`; a chain bound
/// `on: .editingChanged` then reads `text`. When a chain writes `text`, that is not an edit and
/// nothing is sent.
@MainActor
final class TextField: ControlEventSource {
  /// What the field tells its chains.
  enum Event { case editingChanged }

  nonisolated let controlEvents = ControlEvents<Event>()
  /// The text in the field.
  var text = ""

  /// The user types one character at the end of the text.
  func type(_ character: Character) {
    text.append(character)
    controlEvents.send(.editingChanged)
  }

  /// The user deletes the last character; an empty field ignores the key.
  func deleteBackward() {
    guard !text.isEmpty else { return }
    text.removeLast()
    controlEvents.send(.editingChanged)
  }
}
