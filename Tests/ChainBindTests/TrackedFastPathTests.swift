@_spi(Testing) import ChainBind
import Dispatch
import Testing

// Docs/Semantics.md, "Tracked sources": a re-read that touches what the last one touched, and a
// set of the last property of a path of @Bound properties, take the fast ways of
// Docs/Architecture.md, "Tracked re-reads". These tests hold them to the same rules as a full
// re-read: a change is sent once, an equal value is not, and only the path's own value counts.

private final class Leaf: @unchecked Sendable {
  @Bound var value = 0
}

private final class Mid: @unchecked Sendable {
  @Bound var leaf = Leaf()
}

private final class Root: @unchecked Sendable {
  @Bound var mid = Mid()
  @Bound var maybe: Mid? = nil
  // Reads the whole path, but is not it.
  var next: Int { mid.leaf.value + 1 }
  // The same properties, in the same order, and the path's value: still not the path itself.
  var clamped: Int { max(mid.leaf.value, 0) }
}

private final class Gauge {
  var value = -1 { didSet { writes += 1 } }
  var optional: Int? = -1 { didSet { writes += 1 } }
  var writes = 0
}

@Suite("Tracked sources: fast re-reads keep every rule")
struct TrackedFastPathTests {
  @Test("a path's last property: a new value is sent once, an equal one not at all")
  func pathLeafSends() {
    let root = Root()
    let gauge = Gauge()
    let chain = Bind.in(root, \.mid.leaf.value).out(gauge, \.value)
    #expect(gauge.value == 0)
    let writes = gauge.writes
    for value in 1...1_000 {
      root.mid.leaf.value = value
      root.mid.leaf.value = value
    }
    #expect(gauge.value == 1_000)
    #expect(gauge.writes == writes + 1_000)
    chain.unbind()
  }

  @Test("a getter that reads a path and changes its value is not taken for the path")
  func computedOverPathIsNotThePath() {
    let root = Root()
    let next = Gauge()
    let clamped = Gauge()
    let chains = [
      Bind.in(root, \.next).out(next, \.value),
      Bind.in(root, \.clamped).out(clamped, \.value),
    ]
    root.mid.leaf.value = 5
    #expect(next.value == 6)
    #expect(clamped.value == 5)
    root.mid.leaf.value = -3
    #expect(next.value == -2)
    #expect(clamped.value == 0)
    chains.forEach { $0.unbind() }
  }

  @Test("a path through an optional link: its last property reaches the member as optional")
  func optionalPath() {
    let root = Root()
    let gauge = Gauge()
    let chain = Bind.in(root, \.maybe?.leaf.value).out(gauge, \.optional)
    #expect(gauge.optional == nil)
    let mid = Mid()
    root.maybe = mid
    #expect(gauge.optional == 0)
    mid.leaf.value = 4
    #expect(gauge.optional == 4)
    root.maybe = nil
    #expect(gauge.optional == nil)
    mid.leaf.value = 9
    #expect(gauge.optional == nil)
    chain.unbind()
  }

  @Test("after a link is replaced, the new path's last property is the one that counts")
  func newLeafAfterRelink() {
    let root = Root()
    let gauge = Gauge()
    let chain = Bind.in(root, \.mid.leaf.value).out(gauge, \.value)
    let old = root.mid.leaf
    for round in 1...200 {
      let leaf = Leaf()
      root.mid.leaf = leaf
      leaf.value = round
      #expect(gauge.value == round)
      let writes = gauge.writes
      old.value = -round
      #expect(gauge.value == round)
      #expect(gauge.writes == writes)
    }
    chain.unbind()
  }

  @Test("a path's last property that is a member of another chain reaches both")
  func leafThatIsAlsoAMember() {
    let root = Root()
    let nested = Gauge()
    let flat = Gauge()
    let chains = [
      Bind.in(root, \.mid.leaf.value).out(nested, \.value),
      Bind.in(root.mid.leaf, \.value).out(flat, \.value),
    ]
    for value in 1...100 {
      root.mid.leaf.value = value
      #expect(nested.value == value)
      #expect(flat.value == value)
    }
    chains.forEach { $0.unbind() }
  }

  @Test("a computed member re-read many times follows a branch it starts to take")
  func branchAfterManySameReads() {
    final class Form: @unchecked Sendable {
      @Bound var usesCode = false
      @Bound var code = ""
      @Bound var name = ""
      var shown: String { usesCode ? code : name }
    }
    let form = Form()
    let gauge = Gauge()
    var shown = ""
    let chain = Bind.in(form, \.shown).out(key: "shown") { shown = $0 }
    for round in 0..<500 { form.name = "n\(round)" }
    #expect(shown == "n499")
    form.usesCode = true
    form.code = "c"
    #expect(shown == "c")
    form.name = "ignored"
    #expect(shown == "c")
    withExtendedLifetime(gauge) {}
    chain.unbind()
  }

  @Test("a path's last property set while another thread holds the chain in a sink")
  func leafSetWhileASinkHoldsTheChain() {
    let root = Root()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let calls = LockedBox<[Int]>([])
    let chain = Bind.in(root, \.mid.leaf.value).out(key: "held") { value in
      calls.withLock { $0.append(value) }
      if value == 1 {
        entered.signal()
        proceed.wait()
      }
    }
    let leaf = root.mid.leaf
    let done = startThread { leaf.value = 1 }
    #expect(entered.wait(timeout: .now() + 20) == .success)
    // This thread's sets wait behind the held delivery, and return.
    leaf.value = 2
    let replacement = Mid()
    replacement.leaf.value = 3
    root.mid = replacement
    proceed.signal()
    done.wait()
    #expect(waitUntilIdle(chain))
    #expect(calls.withLock { $0.last } == 3)
    // The old leaf is no longer observed.
    let count = calls.withLock { $0.count }
    leaf.value = 4
    #expect(calls.withLock { $0.count } == count)
    chain.unbind()
  }
}
