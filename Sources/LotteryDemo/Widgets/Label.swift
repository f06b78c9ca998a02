/// A line of text the user reads but cannot edit: it only receives from chains.
@MainActor
final class Label {
  /// The text shown.
  var text = ""
}
