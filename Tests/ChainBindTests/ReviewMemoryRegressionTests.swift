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
  // for good, nor keep the key path (and its subscript arguments) alive.
  @Test("shared accesses of key paths made at run time are forgotten once unused")
  func runTimeKeyPathsForgotten() {
    let registry = ScopedRegistry()
    let model = Model()
    weak var firstKeyPath: AnyKeyPath?
    registry.withScope {
      for index in 0..<1_000 {
        let row = Row()
        let subscripted: ReferenceWritableKeyPath<Row, Int> = \Row.[index % 4]
        let cells: ReferenceWritableKeyPath<Row, [Int]> = \Row.cells
        let appended = cells.appending(path: \[Int].[index % 4])
        if index == 0 { firstKeyPath = appended }
        Bind.inout(model, \.int).out(row, subscripted).out(row, appended).unbind()
      }
    }
    // Swept as they grow: at most as many again as the last sweep kept, and 64.
    #expect(registry.sharedAccessCount <= 130)
    #expect(firstKeyPath == nil)
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
