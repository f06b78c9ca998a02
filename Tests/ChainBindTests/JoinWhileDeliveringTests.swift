@_spi(Testing) import ChainBind
import Dispatch
import Observation
import Testing

// Docs/Semantics.md, "Threading": a property added again to its chain (a join) while another
// thread delivers it keeps the sets made on it, before and after the join; at rest every member
// holds the last one. Each test holds the delivering thread in a sink with semaphores while this
// thread sets and joins.

private final class Leaf: @unchecked Sendable {
  @Bound var value = 0
}

private final class Root: @unchecked Sendable {
  @Bound var leaf = Leaf()
}

private final class Sums: @unchecked Sendable {
  @Bound var a = 0
  @Bound var b = 0
  var total: Int { a + b }
}

@Observable
private final class Volume: @unchecked Sendable {
  var level = 0
}

private final class Label: @unchecked Sendable {
  var text = ""
}

private final class Gauge: @unchecked Sendable {
  var value = -1
}

@Suite struct JoinWhileDeliveringTests {
  enum Head: String, CaseIterable, Sendable {
    case flat, nested
  }

  /// What this thread does while the other one is held: sets before and after a join.
  enum Steps: String, CaseIterable, Sendable {
    case setJoinSet, joinSet, setJoin, setJoinSetSet
  }

  @Test(arguments: Head.allCases, Steps.allCases)
  func setsAroundAJoinWhileAnotherThreadDeliversAreKept(_ head: Head, _ steps: Steps) {
    let leaf = Leaf()
    let root = Root()
    root.leaf = leaf
    let other = Leaf()
    let gauge = Gauge()
    let hook = Hook<Int>()
    let chain =
      head == .flat ? Bind.inout(leaf, \.value) : Bind.inout(root, \.leaf.value)
    chain.out(gauge, \.value).inout(other, \.value)
      .out(key: "hold") { hook($0) }
    let join = {
      if head == .flat { Bind.inout(leaf, \.value) } else { Bind.inout(root, \.leaf.value) }
    }
    let (entered, proceed) = hold(hook, at: 100)
    let done = startThread { other.value = 100 }
    entered.wait()
    var last = 100
    switch steps {
    case .setJoinSet:
      leaf.value = 1
      _ = join()
      leaf.value = 2
      last = 2
    case .joinSet:
      _ = join()
      leaf.value = 2
      last = 2
    case .setJoin:
      leaf.value = 1
      _ = join()
      last = 1
    case .setJoinSetSet:
      leaf.value = 1
      _ = join()
      leaf.value = 2
      leaf.value = 3
      last = 3
    }
    proceed.signal()
    done.wait()
    hook.set(nil)
    #expect(waitUntilIdle(chain))
    #expect(leaf.value == last)
    #expect(gauge.value == last)
    #expect(other.value == last)
    #expect(chain.currentValue == last)
    chain.unbind()
  }

  enum Sending: String, CaseIterable, Sendable {
    case computed, nested, observable
  }

  // A sending-only tracked member joined again (as `in`, or as `inout`: then it receives from
  // now on): the re-read its set queued for the member it replaces is not lost.
  @Test(arguments: Sending.allCases, [false, true])
  func aSetBeforeATrackedMembersJoinWhileAnotherThreadDeliversIsKept(
    _ kind: Sending, _ joinsAsInout: Bool
  ) {
    let sums = Sums()
    let root = Root()
    let volume = Volume()
    let other = Leaf()
    let gauge = Gauge()
    let hook = Hook<Int>()
    let join = { () -> Chain<Int> in
      switch kind {
      case .computed: Bind.in(sums, \.total)
      case .nested: Bind.in(root, \.leaf.value)
      case .observable: Bind.in(volume, \.level)
      }
    }
    let chain = join().out(gauge, \.value).inout(other, \.value).out(key: "hold") { hook($0) }
    let (entered, proceed) = hold(hook, at: 100)
    let done = startThread { other.value = 100 }
    entered.wait()
    switch kind {
    case .computed: sums.a = 1
    case .nested: root.leaf.value = 1
    case .observable: volume.level = 1
    }
    if joinsAsInout {
      switch kind {
      case .computed: chain.in(sums, \.total)  // a computed property cannot receive
      case .nested: chain.inout(root, \.leaf.value)
      case .observable: chain.inout(volume, \.level)
      }
    } else {
      _ = join()
    }
    proceed.signal()
    done.wait()
    hook.set(nil)
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 1)
    #expect(gauge.value == 1)
    #expect(other.value == 1)
    chain.unbind()
  }

  enum Moved: String, CaseIterable, Sendable {
    case property, ownedSink
  }

  // A member moved to another chain while its old chain's delivery is inside its write (its
  // conversion, its sink) gets its new chain's value again once that delivery ends.
  @Test(arguments: Moved.allCases)
  func aMemberMovedWhileItsOldChainWritesItEndsAtItsNewChainsValue(_ moved: Moved) {
    let first = Leaf()
    let second = Leaf()
    second.value = 7
    let label = Label()
    let written = LockedBox<[String]>([])
    let hook = Hook<Int>()
    let (entered, proceed) = hold(hook, at: 5)
    let old = Bind.inout(first, \.value)
    let new = Bind.inout(second, \.value)
    switch moved {
    case .property:
      old.out(label, \.text) { (value: Int) -> String in
        hook(value)
        return "old \(value)"
      }
    case .ownedSink:
      old.out(label, key: "row") { label, value in
        hook(value)
        label.text = "old \(value)"
      }
    }
    let done = startThread { first.value = 5 }
    entered.wait()  // the old chain is inside the label's write
    switch moved {
    case .property: new.out(label, \.text) { "new \($0)" }
    case .ownedSink: new.out(label, key: "row") { label, value in label.text = "new \(value)" }
    }
    written.withLock { $0.append(label.text) }
    proceed.signal()
    done.wait()
    hook.set(nil)
    #expect(waitUntilIdle(old))
    #expect(waitUntilIdle(new))
    #expect(written.withLock { $0 } == ["new 7"])
    #expect(label.text == "new 7")
    second.value = 8
    #expect(label.text == "new 8")
    old.unbind()
    new.unbind()
  }

  // Without a set on its way, a sending-only member's property may hold a value the chain has
  // moved on from: joining it again (as `in`, or as `inout`) sends nothing into the chain.
  @Test(arguments: Sending.allCases, [false, true])
  func aJoinOfAnInMemberLeavesTheChainsValue(_ kind: Sending, _ joinsAsInout: Bool) {
    let sums = Sums()
    let root = Root()
    let volume = Volume()
    let other = Leaf()
    let chain: Chain<Int>
    switch kind {
    case .computed: chain = Bind.in(sums, \.total)
    case .nested: chain = Bind.in(root, \.leaf.value)
    case .observable: chain = Bind.in(volume, \.level)
    }
    chain.inout(other, \.value)
    other.value = 50
    switch (kind, joinsAsInout) {
    case (.computed, _): chain.in(sums, \.total)
    case (.nested, false): chain.in(root, \.leaf.value)
    case (.nested, true): chain.inout(root, \.leaf.value)
    case (.observable, false): chain.in(volume, \.level)
    case (.observable, true): chain.inout(volume, \.level)
    }
    #expect(chain.currentValue == 50)
    #expect(other.value == 50)
    let read =
      switch kind {
      case .computed: sums.total
      case .nested: root.leaf.value
      case .observable: volume.level
      }
    #expect(read == (joinsAsInout && kind != .computed ? 50 : 0))
    chain.unbind()
  }
}

extension JoinWhileDeliveringTests {
  // Another thread is held in a sink while this one joins a tracked `in` member, sets what it
  // reads, and joins it again: the first join's member is replaced before its first read ran,
  // so the set reached no member, and the second join's read found the new value. When the
  // delivery ends, the chain still takes the set.
  @Test(arguments: Sending.allCases)
  func aSetBetweenTwoJoinsWhileAnotherThreadDeliversIsKept(_ kind: Sending) {
    let sums = Sums()
    let root = Root()
    let volume = Volume()
    let hook = Hook<Int>()
    let seen = LockedBox<[Int]>([])
    let chain: Chain<Int>
    let join: () -> Void
    let set: @Sendable (Int) -> Void
    switch kind {
    case .computed:
      chain = Bind.in(sums, \.total)
      join = { chain.in(sums, \.total) }
      set = { sums.a = $0 - sums.b }
    case .nested:
      chain = Bind.in(root, \.leaf.value)
      join = { chain.in(root, \.leaf.value) }
      set = { root.leaf.value = $0 }
    case .observable:
      chain = Bind.in(volume, \.level)
      join = { chain.in(volume, \.level) }
      set = { volume.level = $0 }
    }
    chain.out(key: "hold") { value in
      seen.withLock { $0.append(value) }
      hook(value)
    }
    let (entered, proceed) = hold(hook, at: 100)
    let done = startThread { set(100) }
    entered.wait()
    join()
    set(101)
    join()
    proceed.signal()
    done.wait()
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 101)
    #expect(seen.withLock { $0 } == [0, 100, 101])
    set(102)
    #expect(chain.currentValue == 102)
    #expect(chain.memberCount == 1)
    chain.unbind()
  }
}
