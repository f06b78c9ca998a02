import Dispatch
import Foundation
import Testing

@testable @_spi(Testing) import ChainBind

// Regressions found by an independent review of the memory work (shared accesses, members held
// unretained by a delivery): each test failed before its fix.

private final class Source: @unchecked Sendable {
  @Bound var value = 0
}

private final class Target: @unchecked Sendable {
  var value = 0
}

private actor Isolator {
  func add(_ chain: Chain<Int>, _ target: Target) { chain.out(target, \.value) }
}

private final class ChainBox: @unchecked Sendable {
  var chain: Chain<Int>?
}

private final class Document: Hashable {
  static func == (lhs: Document, rhs: Document) -> Bool { lhs === rhs }
  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

private final class Sheet {
  var values: [ObjectIdentifier: Int] = [:]
  subscript(document: Document) -> Int {
    get { values[ObjectIdentifier(document)] ?? 0 }
    set { values[ObjectIdentifier(document)] = newValue }
  }
}

private final class Row {
  var cells = [0, 0, 0, 0]
  subscript(index: Int) -> Int {
    get { cells[index] }
    set { cells[index] = newValue }
  }
}

@Suite("Review regressions: memory")
struct ReviewMemoryRegressionTests {
  // A delivery hands itself to the actor the chain was isolated to while it ran, but the actor is
  // gone: nothing resumes the delivery. It must still end, or the members that left the chain
  // meanwhile (kept for it) and the chain would keep each other forever.
  @Test("a delivery handed to an actor that is gone ends, and frees the chain")
  func handOffToGoneActor() async {
    let source = Source()
    let target = Target()
    let added = Target()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let box = ChainBox()
    weak var weakCore: ChainCore<Int>?
    do {
      let chain = Bind.in(source, \.value).out(target, \.value)
        .out(key: "hold") { value in
          guard value == 1 else { return }
          source.value = 2  // queued: the chain is delivering
          entered.signal()
          proceed.wait()
        }
      box.chain = chain
      weakCore = chain.core
    }
    Thread {
      source.value = 1
      done.signal()
    }.start()
    await waitOffTheCooperativePool(entered)
    var isolator: Isolator? = Isolator()
    weak let weakIsolator = isolator
    if let chain = box.chain { await isolator?.add(chain, added) }  // isolates the chain
    isolator = nil
    while weakIsolator != nil { await Task.yield() }
    proceed.signal()
    await waitOffTheCooperativePool(done)

    if let chain = box.chain {
      #expect(!chain.isActive)
      #expect(chain.membersKeptForDelivery == 0)
    }
    box.chain = nil
    #expect(weakCore == nil)
  }

  // A key path made at run time and passed in a variable is one object however often the
  // member-adding function reads it: its members share an access, which must not outlive them
  // for good, nor keep the key path (and its subscript arguments) alive. The registry keeps the
  // most recent idle accesses only (`Registry.idleAccessLimit`).
  @Test("shared accesses of key paths made at run time are forgotten once unused")
  func runTimeKeyPathsForgotten() {
    let registry = ScopedRegistry()
    let model = Model()
    weak var firstKeyPath: AnyKeyPath?
    // One row: its shard keeps the accesses (a row per step would spread them over the shards
    // by address, where each would keep its few for good, under AddressSanitizer's allocator).
    let row = Row()
    registry.withScope {
      for index in 0..<1_000 {
        let subscripted: ReferenceWritableKeyPath<Row, Int> = \Row.[index % 4]
        let cells: ReferenceWritableKeyPath<Row, [Int]> = \Row.cells
        let appended = cells.appending(path: \[Int].[index % 4])
        if index == 0 { firstKeyPath = appended }
        Bind.inout(model, \.int).out(row, subscripted).out(row, appended).unbind()
      }
    }
    // Each shard keeps its most recent idle accesses.
    #expect(registry.sharedAccessCount <= Registry.idleAccessLimit * Registry.shardCount)
    #expect(firstKeyPath == nil)
  }

  // A key path's subscript arguments are the caller's values: once no member uses the key path,
  // the registry keeps it only among the most recent idle ones, not until some later event that
  // may never come.
  @Test("a subscript argument of a shared key path is freed once newer idle ones replace it")
  func subscriptArgumentFreed() {
    let registry = ScopedRegistry()
    let model = Model()
    let sheet = Sheet()
    weak var weakDocument: Document?
    registry.withScope {
      let document = Document()
      weakDocument = document
      let keyPath: ReferenceWritableKeyPath<Sheet, Int> = \Sheet.[document]
      let chain = Bind.inout(model, \.int).out(sheet, keyPath)
      model.int = 4
      #expect(sheet.values[ObjectIdentifier(document)] == 4)
      chain.unbind()
    }
    registry.withScope {
      for _ in 0..<Registry.idleAccessLimit {
        let other: ReferenceWritableKeyPath<Sheet, Int> = \Sheet.[Document()]
        Bind.inout(model, \.int).out(sheet, other).unbind()
      }
    }
    #expect(weakDocument == nil)
    // The sheet's shard keeps its most recent idle accesses; the model's, the head's.
    #expect(registry.sharedAccessCount <= Registry.idleAccessLimit + 1)
  }

  // The idle accesses kept are the most recently used: one used again goes to the back, and the
  // least recently used one goes first.
  @Test("the least recently used idle access goes first")
  func leastRecentlyUsedGoesFirst() {
    let registry = ScopedRegistry()
    let sheet = Sheet()
    let documents = (0...Registry.idleAccessLimit).map { _ in Document() }
    let keyPaths: [ReferenceWritableKeyPath<Sheet, Int>] = documents.map { \Sheet.[$0] }
    registry.withScope {
      let model = Model()
      let head = Bind.inout(model, \.int)
      func bindOnce(_ index: Int) -> MemberAccess? {
        head.out(sheet, keyPaths[index])
        defer { Bind.unbind(sheet, keyPaths[index]) }
        return head.core.snapshotMembers().last?.access
      }
      let first = bindOnce(0)
      for index in 1..<Registry.idleAccessLimit { _ = bindOnce(index) }
      #expect(bindOnce(0) === first)
      _ = bindOnce(Registry.idleAccessLimit)
      #expect(bindOnce(0) === first)
    }
  }

  @Test("an access idle and used again stays shared")
  func idleAccessReused() {
    let registry = ScopedRegistry()
    let model = Model()
    let plains = (0..<3).map { _ in Plain() }
    registry.withScope {
      // On one object: its shard's access for the call site.
      for _ in plains { Bind.inout(model, \.int).out(plains[0], \.int).unbind() }
      let chain = Bind.inout(model, \.int).out(plains[0], \.int)
      #expect(registry.sharedAccessCount == 2)
      model.int = 9
      #expect(plains[0].int == 9)
      chain.unbind()
    }
  }
}

/// Waits for `semaphore` on a thread of its own: the cooperative pool must stay free.
private func waitOffTheCooperativePool(_ semaphore: DispatchSemaphore) async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    DispatchQueue.global().async {
      semaphore.wait()
      continuation.resume()
    }
  }
}
