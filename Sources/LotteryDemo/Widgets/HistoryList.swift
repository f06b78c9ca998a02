import ChainBind

/// The list of past draws, newest first.
///
/// Its rows change only by the list changes its chain delivers: rows are removed, inserted, moved
/// and updated one by one, as a table view's batch update would.
@MainActor
final class HistoryList {
  /// The draws shown, one per row.
  private(set) var draws: [Draw] = []
  /// The last change applied; `nil` before the first.
  private(set) var lastChange: ListChange<Draw>?
  /// The last change applied, in words, as "+#4 at top, -#1 fell off"; empty when it was the
  /// initial one.
  private(set) var lastChangeText = ""

  /// Applies `change` to the rows: removes the removed rows and moves' sources (descending),
  /// inserts the new list's elements at the insertions and moves' destinations (ascending), then
  /// replaces the updated rows.
  func apply(_ change: ListChange<Draw>) {
    for offset in (change.removed + change.moved.map(\.from)).sorted(by: >) {
      draws.remove(at: offset)
    }
    // A moved row takes the new list's element: it may have changed on the way.
    for offset in (change.inserted + change.moved.map(\.to)).sorted() {
      draws.insert(change.new[offset], at: offset)
    }
    for offset in change.updated {
      draws[offset] = change.new[offset]
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
