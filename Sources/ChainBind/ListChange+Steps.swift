extension ListChange {
  /// One edit of a list, made at the offsets of the list as it stands when it is made.
  ///
  /// ```swift
  /// var rows = ["a", "b", "c"]
  /// let step = ListChange<String>.Step.move(from: 2, to: 0)
  /// rows.insert(rows.remove(at: 2), at: 0)  // what `step` means: ["c", "a", "b"]
  /// ```
  public enum Step {
    /// Removes the element at this offset.
    case remove(at: Int)
    /// Inserts the element at this offset.
    case insert(Element, at: Int)
    /// Removes the element at `from`, then inserts it at `to`, an offset in the list without it.
    case move(from: Int, to: Int)
    /// Replaces the element at this offset with this one.
    case update(Element, at: Int)
  }

  /// The change as edits applied one at a time, each at the offsets of the list as it stands
  /// after the steps before it: applied in order to a copy of ``old``, they give ``new``.
  ///
  /// For a mirror of the list that is not a batch-updating table: a list widget, a terminal
  /// view, an array. Removals come first (descending offsets), then moves, then insertions
  /// (ascending), then updates. A moved element whose content changed is moved, then updated.
  ///
  /// ```swift
  /// // old: [a, b, c], new: [c′, a, d] (c moved to the top and changed, b removed, d inserted)
  /// var rows = change.old
  /// for step in change.steps {
  ///   switch step {
  ///   case .remove(let offset): rows.remove(at: offset)
  ///   case .insert(let row, let offset): rows.insert(row, at: offset)
  ///   case .move(let from, let to): rows.insert(rows.remove(at: from), at: to)
  ///   case .update(let row, let offset): rows[offset] = row
  ///   }
  /// }
  /// // steps: [.remove(at: 1), .move(from: 1, to: 0), .insert(d, at: 2), .update(c′, at: 0)]
  /// // rows == change.new
  /// ```
  ///
  /// There are never more steps than ``removed``, ``inserted``, ``moved`` and ``updated`` have
  /// offsets together (a move that turns out not to change the list is left out). Computed each
  /// time it is read.
  ///
  /// - Complexity: O(*n* + *m* log *n*), where *n* is the lists' length and *m* the number of
  ///   moves.
  public var steps: [Step] {
    var steps: [Step] = []
    steps.reserveCapacity(removed.count + moved.count + inserted.count + updated.count)
    for offset in removed.reversed() { steps.append(.remove(at: offset)) }
    let moves = ListMovePlan.moves(
      oldCount: old.count, newCount: new.count, removed: removed, inserted: inserted, moved: moved)
    for move in moves { steps.append(.move(from: move.from, to: move.to)) }
    for offset in inserted { steps.append(.insert(new[offset], at: offset)) }
    for offset in updated { steps.append(.update(new[offset], at: offset)) }
    return steps
  }
}

extension ListChange.Step: Equatable where Element: Equatable {}

extension ListChange.Step: Sendable where Element: Sendable {}

// The moves of `ListChange.steps`, made one at a time after the removals and before the
// insertions: they turn the kept elements in old order into the kept elements in new order.
//
// The list during the moves is laid out in slots. The elements that stay (the kept elements not
// moved) keep one slot each, in the same order in both lists; in the gap before each of them, and
// after the last, come first the slots of the moved elements that end in that gap (in new order),
// then those of the moved elements that start there (in old order). A moved element leaves its
// source slot for its destination slot; its offset is the number of occupied slots before it,
// counted in a Fenwick tree. In the end every moved element is in its destination slot: the new
// order. Not generic, so its one copy serves every element type.
enum ListMovePlan {
  static func moves(
    oldCount: Int, newCount: Int, removed: [Int], inserted: [Int], moved: [(from: Int, to: Int)]
  ) -> [(from: Int, to: Int)] {
    guard !moved.isEmpty else { return [] }
    // For each offset: the index of its move, `stays`, or `absent` (removed or inserted).
    let stays = -1
    let absent = -2
    var oldRoles = [Int](repeating: stays, count: oldCount)
    var newRoles = [Int](repeating: stays, count: newCount)
    for offset in removed { oldRoles[offset] = absent }
    for offset in inserted { newRoles[offset] = absent }
    for (index, move) in moved.enumerated() {
      oldRoles[move.from] = index
      newRoles[move.to] = index
    }
    var sourceSlots = [Int](repeating: 0, count: moved.count)
    var destinationSlots = [Int](repeating: 0, count: moved.count)
    var isOccupied: [Bool] = []
    isOccupied.reserveCapacity(oldCount + moved.count)
    var oldOffset = 0
    var newOffset = 0
    while oldOffset < oldCount || newOffset < newCount {
      while newOffset < newCount && newRoles[newOffset] != stays {
        if newRoles[newOffset] >= 0 {
          destinationSlots[newRoles[newOffset]] = isOccupied.count
          isOccupied.append(false)
        }
        newOffset += 1
      }
      while oldOffset < oldCount && oldRoles[oldOffset] != stays {
        if oldRoles[oldOffset] >= 0 {
          sourceSlots[oldRoles[oldOffset]] = isOccupied.count
          isOccupied.append(true)
        }
        oldOffset += 1
      }
      // The element that stays, at `oldOffset` in old and `newOffset` in new.
      if oldOffset < oldCount || newOffset < newCount { isOccupied.append(true) }
      oldOffset += 1
      newOffset += 1
    }
    var tree = OccupancyTree(isOccupied)
    var moves: [(from: Int, to: Int)] = []
    moves.reserveCapacity(moved.count)
    for index in moved.indices {
      let from = tree.count(before: sourceSlots[index])
      tree.add(-1, at: sourceSlots[index])
      let to = tree.count(before: destinationSlots[index])
      tree.add(1, at: destinationSlots[index])
      if from != to { moves.append((from: from, to: to)) }
    }
    return moves
  }
}

// How many slots are occupied before a slot, and occupying or freeing one, each in O(log n): a
// Fenwick tree (binary indexed tree) of the occupied counts.
struct OccupancyTree {
  // 1-based: `sums[i]` is the count of the slots (i - (i & -i))..<i.
  private var sums: [Int]

  init(_ isOccupied: [Bool]) {
    sums = [0] + isOccupied.map { $0 ? 1 : 0 }
    for index in sums.indices.dropFirst() {
      let parent = index + (index & -index)
      if parent < sums.count { sums[parent] += sums[index] }
    }
  }

  func count(before slot: Int) -> Int {
    var index = slot
    var count = 0
    while index > 0 {
      count += sums[index]
      index -= index & -index
    }
    return count
  }

  mutating func add(_ delta: Int, at slot: Int) {
    var index = slot + 1
    while index < sums.count {
      sums[index] += delta
      index += index & -index
    }
  }
}
