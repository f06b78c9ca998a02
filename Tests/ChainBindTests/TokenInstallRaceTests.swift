@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Synchronization
import Testing

// Docs/Semantics.md, "Tracked sources": two chains' re-reads that reach the same new `@Bound`
// object on two threads at once install one token in its property, which both observe. They
// used to both write the token field (a data race on the user's object), and the chain whose
// token was overwritten then missed every later change of that property.

private final class Leaf: @unchecked Sendable {
  @Bound var name = ""
}

private final class Holder: @unchecked Sendable {
  @Bound var leaf = Leaf()
}

/// A label written by whichever thread delivers.
private final class NameLabel: @unchecked Sendable {
  private let storage = LockedBox("")
  var text: String {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }
}

/// Hands the next new leaf to the two threads; each touches it after the test's semaphore.
private final class LeafSlot: @unchecked Sendable {
  var leaf = Leaf()
}

@Suite struct TokenInstallRaceTests {
  @Test func twoReReadsReachingOneNewObjectInstallOneToken() {
    let first = Holder()
    let second = Holder()
    let firstLabel = NameLabel()
    let secondLabel = NameLabel()
    let firstChain = Bind.in(first, \.leaf.name).out(firstLabel, \.text)
    let secondChain = Bind.in(second, \.leaf.name).out(secondLabel, \.text)
    let slot = LeafSlot()
    let rounds = 2_000
    let goes = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
    let done = DispatchSemaphore(value: 0)
    let holders = [first, second]
    let threads = (0..<2).map { index in
      startThread {
        for _ in 0..<rounds {
          goes[index].wait()
          holders[index].leaf = slot.leaf  // both re-read the new leaf at once
          done.signal()
        }
      }
    }
    var missed: [Int] = []
    for round in 0..<rounds {
      slot.leaf = Leaf()
      goes[0].signal()
      goes[1].signal()
      done.wait()
      done.wait()
      #expect(waitUntilIdle(firstChain) && waitUntilIdle(secondChain))
      slot.leaf.name = "round \(round)"
      #expect(waitUntilIdle(firstChain) && waitUntilIdle(secondChain))
      if firstLabel.text != "round \(round)" || secondLabel.text != "round \(round)" {
        missed.append(round)
      }
    }
    for thread in threads { thread.wait() }
    #expect(
      missed.isEmpty, "rounds where a chain missed the new leaf's change: \(missed.prefix(10))")
    firstChain.unbind()
    secondChain.unbind()
  }
}
