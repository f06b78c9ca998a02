import ChainBind
import Testing

// Docs/Semantics.md, "List changes": `ListChange.steps`, the change as edits made one at a time.

private struct Item: Identifiable, Equatable, CustomStringConvertible {
  let id: Int
  var text: String
  var description: String { "\(id)\(text)" }
}

/// A value matched by value only: not `Identifiable`.
private struct Word: Equatable, CustomStringConvertible {
  var text: String
  var description: String { text }
}

/// Applies `steps` one at a time to `list`, checking each offset against the list as it stands.
private func apply<Element>(_ steps: [ListChange<Element>.Step], to list: [Element]) -> [Element]? {
  var list = list
  for step in steps {
    switch step {
    case .remove(let offset):
      guard list.indices.contains(offset) else { return nil }
      list.remove(at: offset)
    case .insert(let element, let offset):
      guard (0...list.count).contains(offset) else { return nil }
      list.insert(element, at: offset)
    case .move(let from, let to):
      guard list.indices.contains(from) else { return nil }
      let element = list.remove(at: from)
      guard (0...list.count).contains(to) else { return nil }
      list.insert(element, at: to)
    case .update(let element, let offset):
      guard list.indices.contains(offset) else { return nil }
      list[offset] = element
    }
  }
  return list
}

/// How many offsets the change lists: the most steps it may take.
private func edits<Element>(_ change: ListChange<Element>) -> Int {
  change.removed.count + change.inserted.count + change.moved.count + change.updated.count
}

/// `list` edited at random: rows inserted, removed, changed, moved, shuffled, or all replaced.
///
/// Few ids and little text, so duplicate ids and equal rows are common.
private func edited(_ list: [Item], _ random: inout SplitMix64) -> [Item] {
  var list = list
  for _ in 0..<(1 + random.below(5)) {
    switch random.below(6) {
    case 0:
      list.insert(
        Item(id: random.below(12), text: random.pick(["a", "b"])), at: random.below(list.count + 1))
    case 1: if !list.isEmpty { list.remove(at: random.below(list.count)) }
    case 2: if !list.isEmpty { list[random.below(list.count)].text += "!" }
    case 3:
      if !list.isEmpty {
        let item = list.remove(at: random.below(list.count))
        list.insert(item, at: random.below(list.count + 1))
      }
    case 4: list.shuffle(using: &random)
    default:
      list = (0..<random.below(10)).map { _ in Item(id: random.below(12), text: "a") }
    }
  }
  return list
}

@Suite("List change steps")
struct ListChangeStepsTests {
  @Test("a moved row whose content changed: remove, move, insert, then update")
  func movedAndUpdated() {
    let a = Item(id: 1, text: "a")
    let b = Item(id: 2, text: "b")
    let c = Item(id: 3, text: "c")
    let changedC = Item(id: 3, text: "c′")
    let d = Item(id: 4, text: "d")
    let change = ListChange(from: [a, b, c], to: [changedC, a, d])
    #expect(
      change.steps == [
        .remove(at: 1), .move(from: 1, to: 0), .insert(d, at: 2), .update(changedC, at: 0),
      ]
    )
    #expect(apply(change.steps, to: change.old) == change.new)
  }

  @Test("the initial change inserts every element in order")
  func initial() {
    let feed = Feed()
    feed.items = [Item(id: 1, text: "a"), Item(id: 2, text: "b")]
    var steps: [ListChange<Item>.Step] = []
    let chain = Bind.in(feed, \.items).outChanges(key: "steps") { steps = $0.steps }
    #expect(steps == [.insert(feed.items[0], at: 0), .insert(feed.items[1], at: 1)])
    feed.items.swapAt(0, 1)
    #expect(steps == [.move(from: 1, to: 0)])
    chain.unbind()
  }

  @Test("no change, no steps")
  func noChange() {
    let list = [Item(id: 1, text: "a"), Item(id: 1, text: "a")]
    #expect(ListChange(from: list, to: list).steps.isEmpty)
    #expect(ListChange(from: [Word(text: "x")], to: [Word(text: "x")]).steps.isEmpty)
  }

  @Test(
    "random edits, matched by id: the steps turn old into new, no more of them than edits",
    arguments: 0..<2)
  func randomByID(shard: Int) {
    var random = SplitMix64(seed: UInt64(shard) &+ 20)
    var list: [Item] = []
    for _ in 0..<3_000 {
      let old = list
      list = edited(list, &random)
      let change = ListChange(from: old, to: list)
      let steps = change.steps
      #expect(apply(steps, to: old) == list, "\(old) → \(list): \(steps)")
      #expect(steps.count <= edits(change))
    }
  }

  @Test("random edits, matched by value: the steps turn old into new", arguments: 0..<2)
  func randomByValue(shard: Int) {
    var random = SplitMix64(seed: UInt64(shard) &+ 40)
    var list: [Item] = []
    for _ in 0..<3_000 {
      let old = list
      list = edited(list, &random)
      let words = (old.map(\.description), list.map(\.description))
      let change = ListChange(from: words.0.map(Word.init), to: words.1.map(Word.init))
      let steps = change.steps
      #expect(apply(steps, to: change.old) == change.new, "\(change.old) → \(change.new)")
      #expect(steps.count <= edits(change))
    }
  }

  @Test("a long list with many moves: the steps turn old into new")
  func longShuffle() {
    var random = SplitMix64(seed: 7)
    let old = (0..<2_000).map { Item(id: $0, text: "") }
    var new = old.filter { _ in !random.chance(10) }
    new.shuffle(using: &random)
    for offset in stride(from: 0, to: new.count, by: 7) { new[offset].text = "!" }
    new.insert(contentsOf: (0..<100).map { Item(id: 5_000 + $0, text: "") }, at: new.count / 2)
    let change = ListChange(from: old, to: new)
    let steps = change.steps
    #expect(apply(steps, to: old) == new)
    #expect(steps.count <= edits(change))
    #expect(change.moved.count > 1_000)
  }
}

private final class Feed {
  @Bound var items: [Item] = []
}
