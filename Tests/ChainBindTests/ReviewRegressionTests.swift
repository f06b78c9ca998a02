@_spi(Testing) import ChainBind
import Foundation
import Testing

// Regressions found by an independent review of the 0.2 hot-path and binding work: each test
// failed (or hung) before its fix.

private class Vehicle {
  @Bound var speed = 0
}
private final class Car: Vehicle {}

private final class Tracked {}

private struct Row: Identifiable, Equatable, @unchecked Sendable {
  let id: Int
  var content: Int
  var payload: Tracked?
  static func == (lhs: Row, rhs: Row) -> Bool { lhs.id == rhs.id && lhs.content == rhs.content }
}

private final class Feed: @unchecked Sendable {
  @Bound var rows: [Row] = []
}
private final class Table {}

private final class Key: Hashable {
  static func == (lhs: Key, rhs: Key) -> Bool { lhs === rhs }
  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
private final class Grid {
  var store: [ObjectIdentifier: Int] = [:]
  subscript(key: Key) -> Int {
    get { store[ObjectIdentifier(key), default: 0] }
    set { store[ObjectIdentifier(key)] = newValue }
  }
}

@Suite("Review regressions: binding, lists")
struct ReviewRegressionTests {
  // Docs/Semantics.md, "What is observable": through a subclass key path, an inherited @Bound
  // property is a tracked source of its own (a computed property over it looks the same), so
  // the two spellings are two memberships, each ending with the object. (Binding the second
  // used to leave the first linked to a token it no longer owned: the registry hung on it.)
  @Test("a subclass spelling of a @Bound property is a membership of its own")
  func secondSpellingIsAMembershipOfItsOwn() {
    let registry = ScopedRegistry()
    registry.withScope {
      let first = Plain()
      let second = Plain()
      var firstChain: Chain<Int>?
      var secondChain: Chain<Int>?
      weak var weakCar: Car?
      do {
        let car = Car()
        weakCar = car
        firstChain = Bind.inout(car, \Vehicle.speed).out(first, \.int)
        secondChain = Bind.inout(car, \Car.speed).out(second, \.int)
        #expect(firstChain?.isActive == true)
        car.speed = 5
        #expect(second.int == 5)
        #expect(first.int == 5)
      }
      #expect(weakCar == nil)
      // Both ended with the car.
      #expect(firstChain?.isActive == false)
      #expect(secondChain?.isActive == false)
      firstChain?.unbind()
      secondChain?.unbind()
      #expect(registry.activeChainCount == 0)
    }
  }

  @Test("a released chain whose list sinks are all owned keeps no list")
  func releasedChainWithOwnedListSinksKeepsNoList() {
    let registry = ScopedRegistry()
    registry.withScope {
      let feed = Feed()
      let table = Table()
      weak var weakPayload: Tracked?
      let chain: Chain<[Row]>
      do {
        let payload = Tracked()
        weakPayload = payload
        chain = Bind.in(feed, \.rows).outChanges(table, key: "rows") { _, _ in }
        feed.rows = [Row(id: 1, content: 0, payload: payload)]
        feed.rows = []
      }
      chain.unbind()
      #expect(weakPayload == nil)
    }
  }

  @Test("binding through a key path with subscript arguments keeps none of them")
  func subscriptArgumentsAreNotKept() {
    let registry = ScopedRegistry()
    registry.withScope {
      let model = Model()
      let grid = Grid()
      weak var weakKey: Key?
      do {
        let key = Key()
        weakKey = key
        let chain = Bind.inout(model, \.int).out(grid, \Grid.[key])
        model.int = 3
        #expect(grid[key] == 3)
        chain.unbind()
      }
      #expect(weakKey == nil)
    }
  }

  // Under ThreadSanitizer this reported a race on the sink's last list before it was locked.
  @Test("list sinks added while another thread delivers")
  func listSinksAddedWhileDelivering() {
    let registry = ScopedRegistry()
    let feed = Feed()
    let chain = registry.withScope { Bind.in(feed, \.rows) }
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      for index in 0..<5_000 { feed.rows = [Row(id: index % 7, content: index)] }
      done.signal()
    }
    for key in 0..<500 {
      _ = registry.withScope { chain.outChanges(key: "k\(key % 4)") { _ in } }
    }
    done.wait()
    // What the calls left to a relay is delivered.
    #expect(waitUntilIdle(chain))
    // Every sink still works: the last one added gets the next change, from the list it saw.
    var last: ListChange<Row>?
    _ = registry.withScope { chain.outChanges(key: "k0", initial: false) { last = $0 } }
    let before = feed.rows
    feed.rows = [Row(id: 99, content: 0)]
    #expect(last?.old == before)
    #expect(last?.inserted == [0])
    chain.unbind()
  }
}
