import ChainBind

/// The list of past draws, newest first.
///
/// Its rows change only by the list changes its chain delivers, applied as the change's steps:
/// rows are removed, moved, inserted and updated one at a time, as a list widget that is not a
/// batch-updating table would.
@MainActor
final class HistoryList {
  /// The draws shown, one per row.
  private(set) var draws: [Draw] = []
  /// The last change applied; `nil` before the first.
  private(set) var lastChange: ListChange<Draw>?
  /// The last change applied, in words, as "+#4 at top, -#1 fell off"; empty when it was the
  /// initial one.
  private(set) var lastChangeText = ""

  /// Applies `change` to the rows, one step at a time.
  func apply(_ change: ListChange<Draw>) {
    for step in change.steps {
      switch step {
      case .remove(let offset): draws.remove(at: offset)
      case .insert(let draw, let offset): draws.insert(draw, at: offset)
      case .move(let from, let to): draws.insert(draws.remove(at: from), at: to)
      case .update(let draw, let offset): draws[offset] = draw
      }
    }
    lastChange = change
    lastChangeText = change.isInitial ? "" : Self.describe(change)
  }

  /// A change in words: "+#4 at top, -#1 fell off", "#2 moved to 0", "#3 updated".
  static func describe(_ change: ListChange<Draw>) -> String {
    guard !change.isEmpty else { return "no change" }
    let inserted = change.inserted.map { offset in
      "+#\(change.new[offset].sn) " + (offset == 0 ? "at top" : "at \(offset)")
    }
    let removed = change.removed.map { offset in
      "-#\(change.old[offset].sn)" + (offset == change.old.count - 1 ? " fell off" : "")
    }
    let moved = change.moved.map { "#\(change.new[$0.to].sn) moved to \($0.to)" }
    let updated = change.updated.map { "#\(change.new[$0].sn) updated" }
    return (inserted + removed + moved + updated).joined(separator: ", ")
  }

  /// One draw as a row: issue, code, winning code, outcome.
  static func row(for draw: Draw) -> String {
    let issue = "#\(draw.sn)".padded(to: 5)
    return "\(issue) \(draw.code.padded(to: 4)) win code \(draw.winCode.padded(to: 4))"
      + (draw.isWin ? "WIN" : "-")
  }
}
