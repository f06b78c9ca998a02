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
  /// The last draws, newest first: at most `historyLimit`, as many as the screen shows.
  @Bound private(set) var history: [Draw] = []
  /// Every draw so far, newest first, for the `history` command; no widget shows it.
  private(set) var log: [Draw] = []

  /// How many draws `history` keeps.
  static let historyLimit = 3

  /// Adds a draw at the top of the history; past `historyLimit` draws, the oldest falls off.
  ///
  /// One assignment, so the history's chain sends one change: an insertion at the top and, once
  /// the history is full, a removal at the end.
  func record(_ draw: Draw) {
    log.insert(draw, at: 0)
    history = Array(([draw] + history).prefix(Self.historyLimit))
  }
}

/// One past draw, as the history keeps it; identified by its issue number.
struct Draw: Equatable, Identifiable, Sendable {
  /// The issue the draw was for.
  let sn: Int
  /// The code drawn.
  let code: String
  /// The winning code the draw was played with.
  let winCode: String

  /// The issue number: one draw per issue.
  var id: Int { sn }

  /// Whether the code drawn is the winning code.
  var isWin: Bool { code == winCode }
}
