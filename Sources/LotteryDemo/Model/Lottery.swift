import ChainBind

/// The lottery's state: every property a chain starts from is `@Bound`.
///
/// The model knows nothing about the screen. The chains in `Bindings` carry each change to the
/// widgets, and the widgets' edits back here. It is not main-actor code: any thread may change it,
/// and the main-actor chains take the change to the screen on the main actor.
// @unchecked Sendable: the remote console's thread changes it while the main actor waits for it.
final class Lottery: @unchecked Sendable {
  /// The number of the next issue to draw.
  @Bound var sn = 1
  /// The share of winning slots, from 0 to 1.
  @Bound var winRate = 0.1
  /// The last code drawn; `nil` before the first draw.
  @Bound var code: String? = nil
  /// The code that wins the next draw; empty means the default, "666".
  @Bound var winCode = "666"
  /// Whether the last draw won.
  @Bound var isWin = false
  /// Every draw so far, newest first.
  @Bound private(set) var history: [Draw] = []

  /// Adds a draw at the top of the history.
  func record(_ draw: Draw) {
    history.insert(draw, at: 0)
  }
}

/// One past draw, as the history keeps it.
struct Draw: Equatable, Sendable {
  /// The issue the draw was for.
  let sn: Int
  /// The code drawn.
  let code: String
  /// The winning code the draw was played with.
  let winCode: String

  /// Whether the code drawn is the winning code.
  var isWin: Bool { code == winCode }
}
