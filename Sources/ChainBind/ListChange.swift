import Synchronization

/// What changed between two values of a list, as a table view's batch update applies it.
///
/// Applying it to ``old`` gives ``new``: remove the offsets of ``removed`` and the sources of
/// ``moved`` from `old` (descending); insert, at the offsets of ``inserted`` and the destinations
/// of ``moved`` (ascending), the elements of `new` there; then replace the offsets of
/// ``updated`` with `new`'s elements.
///
/// ```swift
/// Bind.in(feed, \.items)
///   .outChanges(table, key: "rows") { table, change in
///     table.performBatchUpdates {
///       table.deleteRows(at: change.removed)
///       table.insertRows(at: change.inserted)
///       for move in change.moved { table.moveRow(at: move.from, to: move.to) }
///     }
///     table.reloadRows(at: change.updated)
///   }
/// ```
///
/// For `Identifiable` elements, elements are matched by `id`: a kept `id` whose element changed
/// is updated, moved or not (a table view moves a cell without rendering it again), and kept
/// `id`s whose order changed are moved, as few as possible. The same `id`s at
/// the start and at the end of both lists stay in place; between them, an `id` that occurs more
/// than once is matched in order of occurrence: the first in `old` with the first in `new`, and so
/// on. Other elements are matched by value, with the standard library's
/// `difference(from:)` and the moves its `inferringMoves()` infers (an element removed once and
/// inserted once); ``updated`` is then empty.
///
/// A mirror that is not a batch-updating table applies ``steps`` instead: the same change as edits
/// made one at a time.
public struct ListChange<Element> {
  /// The list before the change; empty for the initial call.
  public let old: [Element]
  /// The list after the change.
  public let new: [Element]
  /// Offsets in ``old`` of the elements removed, ascending.
  public let removed: [Int]
  /// Offsets in ``new`` of the elements inserted, ascending.
  public let inserted: [Int]
  /// The elements moved, from their offset in ``old`` to their offset in ``new``.
  ///
  /// By ascending destination. A move is never in ``removed`` or ``inserted`` too.
  public let moved: [(from: Int, to: Int)]
  /// Offsets in ``new`` of kept elements whose content changed, moved or not, ascending.
  public let updated: [Int]
  /// Whether this is the call made when the sink was added: ``old`` is empty and every offset
  /// of ``new`` is inserted.
  public let isInitial: Bool

  /// Whether nothing changed.
  public var isEmpty: Bool {
    removed.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
  }

  @usableFromInline
  init(
    old: [Element], new: [Element], removed: [Int], inserted: [Int], moved: [(from: Int, to: Int)],
    updated: [Int], isInitial: Bool
  ) {
    self.old = old
    self.new = new
    self.removed = removed
    self.inserted = inserted
    self.moved = moved
    self.updated = updated
    self.isInitial = isInitial
  }
}

extension ListChange: Sendable where Element: Sendable {}

extension ListChange where Element: Equatable {
  /// The change from `old` to `new`, elements matched by value.
  ///
  /// - Parameters:
  ///   - old: The list before.
  ///   - new: The list after.
  @inlinable
  public init(from old: [Element], to new: [Element]) {
    var removals: [(offset: Int, element: Element)] = []
    var insertions: [(offset: Int, element: Element)] = []
    for change in new.difference(from: old) {
      switch change {
      case .remove(let offset, let element, _): removals.append((offset, element))
      case .insert(let offset, let element, _): insertions.append((offset, element))
      }
    }
    // Moves inferred as the standard library's `inferringMoves()` infers them: an element
    // removed once and inserted once. Equatable alone allows no hashing, so this is quadratic in
    // the number of edits.
    var removed: [Int] = []
    var moved: [(from: Int, to: Int)] = []
    var paired = [Bool](repeating: false, count: insertions.count)
    for removal in removals {
      let element = removal.element
      let inserted = insertions.indices.lazy.filter { insertions[$0].element == element }.prefix(2)
      if inserted.count == 1, removals.lazy.filter({ $0.element == element }).prefix(2).count == 1,
        let index = inserted.first
      {
        paired[index] = true
        moved.append((from: removal.offset, to: insertions[index].offset))
      } else {
        removed.append(removal.offset)
      }
    }
    let inserted = insertions.indices.filter { !paired[$0] }.map { insertions[$0].offset }
    self.init(
      old: old, new: new, removed: removed.sorted(), inserted: inserted.sorted(),
      moved: moved.sorted { $0.to < $1.to }, updated: [], isInitial: false)
  }

  @usableFromInline
  static func initial(_ new: [Element]) -> ListChange {
    ListChange(
      old: [], new: new, removed: [], inserted: Array(new.indices), moved: [], updated: [],
      isInitial: true)
  }
}

extension ListChange where Element: Identifiable & Equatable {
  /// The change from `old` to `new`, elements matched by `id`, with as few moves as possible.
  ///
  /// O(n log n) in the lists' length.
  ///
  /// - Parameters:
  ///   - old: The list before.
  ///   - new: The list after.
  @inlinable
  public init(from old: [Element], to new: [Element]) {
    // The same ids at the start and at the end are kept in place: only the middle is matched.
    let shorter = min(old.count, new.count)
    var prefix = 0
    while prefix < shorter && old[prefix].id == new[prefix].id { prefix += 1 }
    var suffix = 0
    while suffix < shorter - prefix
      && old[old.count - 1 - suffix].id == new[new.count - 1 - suffix].id
    {
      suffix += 1
    }
    var updated: [Int] = []
    for offset in 0..<prefix where old[offset] != new[offset] { updated.append(offset) }
    let oldMiddle = prefix..<(old.count - suffix)
    let newMiddle = prefix..<(new.count - suffix)
    let matchedOld = Self.match(old[oldMiddle], new[newMiddle])
    // The kept elements in new order, with their old offsets; the rest is inserted or removed.
    var isKept = [Bool](repeating: false, count: oldMiddle.count)
    var keptOld: [Int] = []
    var keptNew: [Int] = []
    keptOld.reserveCapacity(min(oldMiddle.count, newMiddle.count))
    keptNew.reserveCapacity(min(oldMiddle.count, newMiddle.count))
    var inserted: [Int] = []
    for offset in newMiddle {
      let oldOffset = matchedOld[offset - prefix]
      if oldOffset < 0 {
        inserted.append(offset)
      } else {
        isKept[oldOffset - prefix] = true
        keptOld.append(oldOffset)
        keptNew.append(offset)
      }
    }
    var removed: [Int] = []
    for offset in oldMiddle where !isKept[offset - prefix] { removed.append(offset) }
    // The kept elements that stay in place: a longest increasing run of their old offsets, in
    // new order. Every other kept element moves: as few moves as possible.
    let stays = Self.longestIncreasing(keptOld)
    var moved: [(from: Int, to: Int)] = []
    // A moved element whose content changed is updated too: a table view moves a cell without
    // rendering it again.
    for index in keptOld.indices {
      if !stays[index] { moved.append((from: keptOld[index], to: keptNew[index])) }
      if old[keptOld[index]] != new[keptNew[index]] { updated.append(keptNew[index]) }
    }
    for offset in (new.count - suffix)..<new.count {
      if old[offset - new.count + old.count] != new[offset] { updated.append(offset) }
    }
    self.init(
      old: old, new: new, removed: removed, inserted: inserted, moved: moved, updated: updated,
      isInitial: false)
  }

  // For each element of `new`, the offset in `old` of the element with its id, or -1: the k-th
  // occurrence of an id in `old` matches its k-th occurrence in `new` (within the slices: the
  // common prefix and suffix were matched in place before).
  @inlinable
  static func match(_ old: ArraySlice<Element>, _ new: ArraySlice<Element>) -> [Int] {
    var first: [Element.ID: Int] = [:]
    first.reserveCapacity(old.count)
    var hasDuplicates = false
    for offset in old.indices where first.updateValue(offset, forKey: old[offset].id) != nil {
      hasDuplicates = true
      break
    }
    if !hasDuplicates {
      // Looked up, not removed (cheaper); a second occurrence in `new` finds its match taken.
      var isTaken = [Bool](repeating: false, count: old.count)
      return new.map { element in
        guard let offset = first[element.id], !isTaken[offset - old.startIndex] else { return -1 }
        isTaken[offset - old.startIndex] = true
        return offset
      }
    }
    var offsets: [Element.ID: [Int]] = [:]
    for offset in old.indices { offsets[old[offset].id, default: []].append(offset) }
    var taken: [Element.ID: Int] = [:]
    return new.map { element in
      let occurrence = taken[element.id, default: 0]
      taken[element.id] = occurrence + 1
      guard let candidates = offsets[element.id], occurrence < candidates.count else { return -1 }
      return candidates[occurrence]
    }
  }

  // Marks a longest strictly increasing subsequence of `values` (patience sorting, O(n log n)).
  @inlinable
  static func longestIncreasing(_ values: [Int]) -> [Bool] {
    var tails: [Int] = []  // indices into `values`
    var previous = [Int](repeating: -1, count: values.count)
    for (index, value) in values.enumerated() {
      // Most values extend the longest run so far: no search.
      if let last = tails.last, values[last] < value {
        previous[index] = last
        tails.append(index)
        continue
      }
      var low = 0
      var high = tails.count
      while low < high {
        let middle = (low + high) / 2
        if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
      }
      if low > 0 { previous[index] = tails[low - 1] }
      if low == tails.count { tails.append(index) } else { tails[low] = index }
    }
    var marks = [Bool](repeating: false, count: values.count)
    var index = tails.last ?? -1
    while index >= 0 {
      marks[index] = true
      index = previous[index]
    }
    return marks
  }
}

extension Chain {
  /// Adds a sink that receives each change of the chain's list as a ``ListChange``, elements
  /// matched by value.
  ///
  /// ```swift
  /// Bind.in(log, \.lines).outChanges(key: "rows") { change in apply(change) }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The sink's name in this chain.
  ///   - initial: Whether to call the sink now, with every element inserted.
  ///   - isolation: The caller's actor, passed by Swift; leave it out.
  ///   - sink: The closure to call with each change.
  /// - Returns: This chain.
  @inlinable
  @discardableResult
  public func outChanges<Element: Equatable>(
    key: String, initial: Bool = true, isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (ListChange<Element>) -> Void
  ) -> Chain where Value == [Element] {
    let differ = ListDiffer(
      initial: initial,
      shared: core.sharedListChange(matchesByID: false) { ListChange(from: $0, to: $1) })
    return out(key: key, initial: initial, isolation: isolation, starting: differ.start) { list in
      if let change = differ.change(to: list) { sink(change) }
    }
  }

  /// Adds a sink that receives each change of the chain's list as a ``ListChange``, elements
  /// matched by `id`.
  ///
  /// ```swift
  /// Bind.in(feed, \.posts).outChanges(key: "rows") { change in apply(change) }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The sink's name in this chain.
  ///   - initial: Whether to call the sink now, with every element inserted.
  ///   - isolation: The caller's actor, passed by Swift; leave it out.
  ///   - sink: The closure to call with each change.
  /// - Returns: This chain.
  @inlinable
  @discardableResult
  public func outChanges<Element: Identifiable & Equatable>(
    key: String, initial: Bool = true, isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (ListChange<Element>) -> Void
  ) -> Chain where Value == [Element] {
    let differ = ListDiffer(
      initial: initial,
      shared: core.sharedListChange(matchesByID: true) { ListChange(from: $0, to: $1) })
    return out(key: key, initial: initial, isolation: isolation, starting: differ.start) { list in
      if let change = differ.change(to: list) { sink(change) }
    }
  }

  /// Adds a sink owned by `owner` that receives each change of the list, matched by value.
  ///
  /// It receives a ``ListChange``, and follows its owner like ``out(_:key:initial:isolation:_:)``.
  ///
  /// - Parameters:
  ///   - owner: The object the closure renders into. The chain never retains it.
  ///   - key: The sink's name for this owner.
  ///   - initial: Whether to call the sink now, with every element inserted.
  ///   - isolation: The caller's actor, passed by Swift; leave it out.
  ///   - sink: The closure to call with the owner and each change.
  /// - Returns: This chain.
  @inlinable
  @discardableResult
  public func outChanges<Owner: AnyObject, Element: Equatable>(
    _ owner: Owner, key: String, initial: Bool = true,
    isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (Owner, ListChange<Element>) -> Void
  ) -> Chain where Value == [Element] {
    let differ = ListDiffer(
      initial: initial,
      shared: core.sharedListChange(matchesByID: false) { ListChange(from: $0, to: $1) })
    return out(owner, key: key, isolation: isolation) { owner, list in
      if let change = differ.change(to: list) { sink(owner, change) }
    }
  }

  /// Adds a sink owned by `owner` that receives each change of the list, matched by `id`.
  ///
  /// It receives a ``ListChange``, and follows its owner like ``out(_:key:initial:isolation:_:)``.
  ///
  /// ```swift
  /// Bind.in(feed, \.posts)
  ///   .outChanges(table, key: "rows") { table, change in table.apply(change) }
  /// ```
  ///
  /// - Parameters:
  ///   - owner: The object the closure renders into. The chain never retains it.
  ///   - key: The sink's name for this owner.
  ///   - initial: Whether to call the sink now, with every element inserted.
  ///   - isolation: The caller's actor, passed by Swift; leave it out.
  ///   - sink: The closure to call with the owner and each change.
  /// - Returns: This chain.
  @inlinable
  @discardableResult
  public func outChanges<Owner: AnyObject, Element: Identifiable & Equatable>(
    _ owner: Owner, key: String, initial: Bool = true,
    isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (Owner, ListChange<Element>) -> Void
  ) -> Chain where Value == [Element] {
    let differ = ListDiffer(
      initial: initial,
      shared: core.sharedListChange(matchesByID: true) { ListChange(from: $0, to: $1) })
    return out(owner, key: key, isolation: isolation) { owner, list in
      if let change = differ.change(to: list) { sink(owner, change) }
    }
  }
}

// The list a sink saw last, to compute the next change from. Deliveries call it one at a time
// (Docs/Semantics.md, "Propagation"), but a sink added while another thread delivers may be
// called from both threads at once: `last` is locked, and the change computed after unlocking.
// A sink's first call gives the differ the list to start from, passed on only when `initial`.
// A keyed sink without one starts from the chain's list when it is added (`start`, under the
// chain's lock), and takes every delivery from then on (`ChainCore.addSink`).
@usableFromInline
final class ListDiffer<Element: Equatable>: @unchecked Sendable {
  private let last = Locked<[Element]?>(nil)
  private let passesInitial: Bool
  private let shared: SharedListChange<Element>

  @usableFromInline
  init(initial: Bool, shared: SharedListChange<Element>) {
    passesInitial = initial
    self.shared = shared
  }

  // Sets the list the first change starts from; nothing is released.
  @usableFromInline
  func start(from list: [Element]) {
    last.withLock { $0 = list }
  }

  @usableFromInline
  func change(to new: [Element]) -> ListChange<Element>? {
    // The list it replaces is released after unlocking, when this returns.
    let last = self.last.withLock { last in
      defer { last = new }
      return last
    }
    guard let last else { return passesInitial ? .initial(new) : nil }
    return shared.change(from: last, to: new)
  }
}

// The change a chain's list sinks share (Docs/Semantics.md, "List changes"): the first sink to
// see a change computes it, the others, which saw the same lists, take it. The lists are compared
// by storage, in constant time. `diff` was built where the sink was added, so it is specialized.
@usableFromInline
final class SharedListChange<Element>: @unchecked Sendable {
  @usableFromInline
  struct Last {
    let old: [Element]
    let new: [Element]
    let change: ListChange<Element>
  }

  let matchesByID: Bool
  private let diff: ([Element], [Element]) -> ListChange<Element>
  private let last = Locked<Last?>(nil)
  // How many changes were computed, for tests (Bind+Testing.swift).
  let computedCount = Atomic<Int>(0)

  @usableFromInline
  init(matchesByID: Bool, diff: @escaping ([Element], [Element]) -> ListChange<Element>) {
    self.matchesByID = matchesByID
    self.diff = diff
  }

  func change(from old: [Element], to new: [Element]) -> ListChange<Element> {
    if let last = last.withLock({ $0 }), last.old.hasSameStorage(as: old),
      last.new.hasSameStorage(as: new)
    {
      return last.change
    }
    let change = diff(old, new)
    computedCount.add(1, ordering: .relaxed)
    // The lists it replaces are released after unlocking: their elements' deinits are user code.
    let replaced = last.withLock { last in
      defer { last = Last(old: old, new: new, change: change) }
      return last
    }
    withExtendedLifetime(replaced) {}
    return change
  }
}

protocol ListChangeCounting {
  var computedChanges: Int { get }
}

extension SharedListChange: ListChangeCounting {
  var computedChanges: Int { computedCount.load(ordering: .relaxed) }
}

extension Array {
  // Whether both arrays are the same storage: equal, found in constant time.
  fileprivate func hasSameStorage(as other: [Element]) -> Bool {
    count == other.count
      && withUnsafeBufferPointer { mine in
        other.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
      }
  }
}
