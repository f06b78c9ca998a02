@_spi(Testing) import ChainBind
import Foundation
import Testing

// Docs/Semantics.md, "List changes": `ListChange` and the list sinks.

private struct Row: Identifiable, Equatable {
  let id: Int
  var text: String
}

/// Applies `change` to its `old` list as a table view's batch update would.
private func apply<Element>(_ change: ListChange<Element>) -> [Element] {
  var list = change.old
  let removals = (change.removed + change.moved.map(\.from)).sorted(by: >)
  for offset in removals { list.remove(at: offset) }
  let insertions = (change.inserted + change.moved.map(\.to)).sorted()
  for offset in insertions { list.insert(change.new[offset], at: offset) }
  for offset in change.updated { list[offset] = change.new[offset] }
  return list
}

/// Applies `change` to its `old` list as a table view does: deletes, then inserts (a moved cell
/// keeps its old content), then reloads the updated rows with `new`'s elements.
private func applyAsTable<Element>(_ change: ListChange<Element>) -> [Element] {
  var cells = change.old
  var movedCells: [Int: Element] = [:]
  for move in change.moved { movedCells[move.to] = change.old[move.from] }
  for offset in (change.removed + change.moved.map(\.from)).sorted(by: >) {
    cells.remove(at: offset)
  }
  for offset in (change.inserted + change.moved.map(\.to)).sorted() {
    cells.insert(movedCells[offset] ?? change.new[offset], at: offset)
  }
  for offset in change.updated { cells[offset] = change.new[offset] }
  return cells
}

/// A list of rows with few ids (duplicates likely) and little text (equal rows likely).
private func randomRows(_ random: inout SplitMix64, count: Int) -> [Row] {
  (0..<count).map { _ in Row(id: random.below(8), text: random.pick(["a", "b"])) }
}

/// The fewest moves that turn the kept ids' old order into their new order: how many are not
/// in a longest increasing run (quadratic, independent of the library's method).
private func fewestMoves(_ old: [Row], _ new: [Row]) -> Int {
  let oldOffsets = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.id, $0) })
  let kept = new.compactMap { oldOffsets[$0.id] }
  guard !kept.isEmpty else { return 0 }
  var longest = [Int](repeating: 1, count: kept.count)
  for i in kept.indices {
    for j in 0..<i where kept[j] < kept[i] { longest[i] = max(longest[i], longest[j] + 1) }
  }
  return kept.count - (longest.max() ?? 0)
}

private final class Feed {
  @Bound var rows: [Row] = []
  @Bound var words: [String] = []
}

private final class Table {
  var applied: [ListChange<Row>] = []
}

@Suite("List changes")
struct ListChangeTests {
  @Test("an insertion at the top is one insertion, and moves nothing")
  func insertAtTop() {
    let old = (1...5).map { Row(id: $0, text: "\($0)") }
    let new = [Row(id: 0, text: "0")] + old
    let change = ListChange(from: old, to: new)
    #expect(change.inserted == [0])
    #expect(change.removed.isEmpty)
    #expect(change.moved.isEmpty)
    #expect(change.updated.isEmpty)
    #expect(apply(change) == new)
  }

  @Test("a kept id with other content is updated")
  func update() {
    let old = [Row(id: 1, text: "a"), Row(id: 2, text: "b")]
    let new = [Row(id: 1, text: "a"), Row(id: 2, text: "B")]
    let change = ListChange(from: old, to: new)
    #expect(change.updated == [1])
    #expect(change.isEmpty == false)
    #expect(apply(change) == new)
  }

  @Test("a moved row whose content changed is moved and updated")
  func movedAndUpdated() {
    let old = [Row(id: 1, text: "a"), Row(id: 2, text: "b"), Row(id: 3, text: "c")]
    let new = [Row(id: 3, text: "c′"), Row(id: 1, text: "a"), Row(id: 2, text: "b")]
    let change = ListChange(from: old, to: new)
    #expect(change.moved.map(\.from) == [2])
    #expect(change.moved.map(\.to) == [0])
    #expect(change.updated == [0])
    #expect(change.removed.isEmpty && change.inserted.isEmpty)
    #expect(apply(change) == new)
    #expect(applyAsTable(change) == new)
  }

  @Test("a table that moves cells with their old content, then reloads, ends at new")
  func tableBatchUpdate() {
    var random = SplitMix64(seed: 2_020)
    for _ in 0..<3_000 {
      let old = randomRows(&random, count: random.below(10))
      var new = random.chance(30) ? randomRows(&random, count: random.below(10)) : old
      for _ in 0..<random.below(4) where !new.isEmpty {
        switch random.below(3) {
        case 0: new[random.below(new.count)].text += "!"
        case 1:
          let row = new.remove(at: random.below(new.count))
          new.insert(row, at: random.below(new.count + 1))
        default: new.swapAt(random.below(new.count), random.below(new.count))
        }
      }
      let change = ListChange(from: old, to: new)
      #expect(applyAsTable(change) == new, "\(old) → \(new)")
      #expect(apply(change) == new, "\(old) → \(new)")
      #expect(change.updated == change.updated.sorted())
      #expect(Set(change.updated).count == change.updated.count)
    }
  }

  @Test("moving one row is one move")
  func oneMove() {
    let old = (0..<6).map { Row(id: $0, text: "") }
    var new = old
    new.insert(new.remove(at: 4), at: 1)
    let change = ListChange(from: old, to: new)
    #expect(change.moved.count == 1)
    #expect(change.moved.first?.from == 4)
    #expect(change.moved.first?.to == 1)
    #expect(apply(change) == new)
  }

  @Test("removals and the oldest falling off")
  func removals() {
    let old = (0..<5).map { Row(id: $0, text: "") }
    let new = [Row(id: 9, text: "")] + old.dropLast()
    let change = ListChange(from: old, to: new)
    #expect(change.inserted == [0])
    #expect(change.removed == [4])
    #expect(change.moved.isEmpty)
    #expect(apply(change) == new)
  }

  @Test("duplicate ids are matched in order of occurrence")
  func duplicateIDs() {
    let old = [Row(id: 1, text: "a"), Row(id: 1, text: "b"), Row(id: 2, text: "c")]
    let new = [Row(id: 2, text: "c"), Row(id: 1, text: "a"), Row(id: 1, text: "B")]
    let change = ListChange(from: old, to: new)
    #expect(change.removed.isEmpty && change.inserted.isEmpty)
    #expect(apply(change) == new)
  }

  @Test("the common prefix and suffix stay in place before duplicates are matched")
  func duplicateIDsAtTheEnds() {
    let old = [Row(id: 1, text: "a"), Row(id: 2, text: "b"), Row(id: 1, text: "c")]
    let new = [Row(id: 2, text: "b"), Row(id: 1, text: "c")]
    let change = ListChange(from: old, to: new)
    // The last `1` is the common suffix: the first one is removed.
    #expect(change.removed == [0])
    #expect(change.inserted.isEmpty && change.moved.isEmpty && change.updated.isEmpty)
    #expect(apply(change) == new)
  }

  @Test("elements that are only Equatable are matched by value, with moves inferred")
  func byValue() {
    let old = ["a", "b", "c", "d"]
    let new = ["d", "a", "c", "x"]
    let change = ListChange(from: old, to: new)
    #expect(change.updated.isEmpty)
    #expect(change.moved.map(\.from) == [3])
    #expect(apply(change) == new)
  }

  // A value removed or inserted more than once is no move: the standard library pairs only an
  // element removed once and inserted once.
  @Test(
    "moves by value are the ones the standard library infers",
    arguments: [
      ([2, 2, 4, 2, 1], [1, 2, 1, 2]), ([1, 2, 3], [3, 1, 2]), ([1, 1, 2], [2, 1, 1]),
      ([5, 6, 5, 6], [6, 5, 6, 5]),
    ])
  func movesByValue(old: [Int], new: [Int]) {
    checkMovesByValue(from: old, to: new)
  }

  @Test("random edits by value: the moves are the standard library's", arguments: 0..<2)
  func randomMovesByValue(shard: Int) {
    var random = SplitMix64(seed: UInt64(shard) &+ 5)
    for _ in 0..<2_000 {
      let old = (0..<random.below(14)).map { _ in random.below(6) }
      checkMovesByValue(from: old, to: (0..<random.below(14)).map { _ in random.below(6) })
    }
  }

  // The change's moves are the ones `inferringMoves()` infers, and it turns `old` into `new`.
  private func checkMovesByValue(from old: [Int], to new: [Int]) {
    var expected: [Int: Int] = [:]
    for case .insert(let to, _, let from?) in new.difference(from: old).inferringMoves() {
      expected[to] = from
    }
    let change = ListChange(from: old, to: new)
    #expect(Dictionary(uniqueKeysWithValues: change.moved.map { ($0.to, $0.from) }) == expected)
    #expect(apply(change) == new)
    #expect(applyAsTable(change) == new)
  }

  @Test("random edits: the change turns old into new, with the fewest moves", arguments: 0..<2)
  func randomEdits(shard: Int) {
    var random = SplitMix64(seed: UInt64(shard) &+ 77)
    for _ in 0..<1_500 {
      var list = (0..<random.below(12)).map { Row(id: $0, text: "t\($0)") }
      var nextID = 100
      for _ in 0..<random.below(6) {
        let old = list
        switch random.below(6) {
        case 0:
          list.insert(Row(id: nextID, text: "n"), at: random.below(list.count + 1))
          nextID += 1
        case 1: if !list.isEmpty { list.remove(at: random.below(list.count)) }
        case 2:
          if !list.isEmpty { list[random.below(list.count)].text += "!" }
        case 3:
          if !list.isEmpty {
            let row = list.remove(at: random.below(list.count))
            list.insert(row, at: random.below(list.count + 1))
          }
        case 4: list.shuffle(using: &random)
        default:
          list = (0..<random.below(8)).map { Row(id: nextID + $0, text: "r") }
          nextID += 10
        }
        let change = ListChange(from: old, to: list)
        #expect(apply(change) == list)
        #expect(change.moved.count == fewestMoves(old, list))
        #expect(Set(change.moved.map(\.from)).isDisjoint(with: change.removed))
        #expect(Set(change.moved.map(\.to)).isDisjoint(with: change.inserted))
        let words = old.map(\.text) + ["x"]
        let other = list.map(\.text)
        #expect(apply(ListChange(from: words, to: other)) == other)
      }
    }
  }

  @Test("a list sink gets the initial list, then each change")
  func listSink() {
    let feed = Feed()
    feed.rows = [Row(id: 1, text: "a")]
    var changes: [ListChange<Row>] = []
    let chain = Bind.in(feed, \.rows).outChanges(key: "rows") { changes.append($0) }
    #expect(changes.count == 1)
    #expect(changes[0].isInitial)
    #expect(changes[0].old.isEmpty)
    #expect(changes[0].inserted == [0])
    feed.rows.insert(Row(id: 2, text: "b"), at: 0)
    #expect(changes.count == 2)
    #expect(changes[1].inserted == [0])
    #expect(changes[1].isInitial == false)
    chain.unbind()
  }

  @Test("a list sink with initial: false starts from the current list")
  func listSinkNotInitial() {
    let feed = Feed()
    feed.words = ["a"]
    var changes: [ListChange<String>] = []
    let chain = Bind.in(feed, \.words)
      .outChanges(key: "words", initial: false) { changes.append($0) }
    #expect(changes.isEmpty)
    feed.words.append("b")
    #expect(changes.count == 1)
    #expect(changes[0].old == ["a"])
    #expect(changes[0].inserted == [1])
    chain.unbind()
  }

  @Test("an owned list sink follows its owner")
  func ownedListSink() {
    let first = Feed()
    let second = Feed()
    let table = Table()
    let render = { (table: Table, change: ListChange<Row>) in table.applied.append(change) }
    let firstChain = Bind.in(first, \.rows).outChanges(table, key: "rows", render)
    let secondChain = Bind.in(second, \.rows).outChanges(table, key: "rows", render)
    first.rows = [Row(id: 1, text: "stale")]
    #expect(table.applied.count == 2)  // the two initial calls
    second.rows = [Row(id: 2, text: "fresh")]
    #expect(table.applied.count == 3)
    #expect(table.applied.last?.new == [Row(id: 2, text: "fresh")])
    firstChain.unbind()
    secondChain.unbind()
  }

  @Test("list sinks of a chain share one computed change, each getting it")
  func sharedChange() {
    let feed = Feed()
    let table = Table()
    var first: [ListChange<Row>] = []
    var second: [ListChange<Row>] = []
    let chain = Bind.in(feed, \.rows)
      .outChanges(key: "first") { first.append($0) }
      .outChanges(table, key: "second") { _, change in second.append(change) }
      .outChanges(key: "third", initial: false) { _ in }
    feed.rows = [Row(id: 1, text: "a"), Row(id: 2, text: "b")]
    feed.rows.swapAt(0, 1)
    #expect(chain.listChangesComputed == 2)
    #expect(first.count == 3)
    #expect(second.count == 3)
    #expect(first.last?.moved.count == 1)
    #expect(second.last?.moved.count == 1)
    #expect(second.last?.new == feed.rows)
    chain.unbind()
  }

  @Test("a list sink added later computes its own first change, then shares")
  func lateSinkSharesAfterItsFirstChange() {
    let feed = Feed()
    feed.rows = [Row(id: 1, text: "a")]
    var early: [ListChange<Row>] = []
    var late: [ListChange<Row>] = []
    let chain = Bind.in(feed, \.rows).outChanges(key: "early") { early.append($0) }
    feed.rows.append(Row(id: 2, text: "b"))
    chain.outChanges(key: "late") { late.append($0) }
    feed.rows.append(Row(id: 3, text: "c"))
    // Both saw the same two lists for the last change: computed once.
    #expect(chain.listChangesComputed == 2)
    #expect(early.last?.inserted == [2])
    #expect(late.last?.inserted == [2])
    #expect(late.first?.isInitial == true)
    chain.unbind()
  }
}
