@_spi(Testing) import ChainBind
import Dispatch
import Observation
import Testing

// Docs/Semantics.md, "Threading" and "Isolation": a tracked member (a nested path, an
// `@Observable` property) set while the chain delivers another change, on another thread or
// queued for the chain's actor, is a change of its own: the delivery before it does not write
// over it, and the chain ends at it.

private final class Flat: @unchecked Sendable {
  @Bound var value = 0
}

private final class Inner: @unchecked Sendable {
  @Bound var value = 0
}

private final class Outer: @unchecked Sendable {
  @Bound var inner = Inner()
}

// Its getter calls a hook with the value it is about to read.
private final class HeldGetter: @unchecked Sendable {
  let getterHook = Hook<Int>()
  @Bound var base = 0
  var value: Int {
    get {
      getterHook(base)
      return base
    }
    set { base = newValue }
  }
}

@Observable
private final class GateFlag: @unchecked Sendable {
  var on = false
}

// Reads an `@Observable` flag, and a `@Bound` property only when it is on.
private final class Gated: @unchecked Sendable {
  let gate = GateFlag()
  @Bound var base = 5
  var value: Int { gate.on ? base : 0 }
}

// The same, calling a hook with `base` once it has read it.
private final class HeldGated: @unchecked Sendable {
  let gate = GateFlag()
  let readHook = Hook<Int>()
  @Bound var base = 5
  var value: Int {
    guard gate.on else { return 0 }
    let read = base
    readHook(read)
    return read
  }
}

private final class Computed: @unchecked Sendable {
  @Bound var base = 0
  var value: Int {
    get { base }
    set { base = newValue }
  }
}

@Observable
private final class Level: @unchecked Sendable {
  var value = 0
}

private final class Calls: Sendable {
  private let box = LockedBox<[Int]>([])
  func record(_ value: Int) { box.withLock { $0.append(value) } }
  var values: [Int] { box.withLock { $0 } }
}

/// The kinds of tracked member `Pair` binds.
enum TrackedMemberKind: String, CaseIterable, Sendable {
  // A nested path's leaf set; a link of it replaced; a computed property; an `@Observable` one.
  case nested, link, computed, observable
}

// A tracked member of one of two kinds; its chain's other end is a flat @Bound property.
private struct Pair: @unchecked Sendable {
  let kind: TrackedMemberKind
  let flat = Flat()
  let outer = Outer()
  let level = Level()
  let computed = Computed()

  func setTracked(_ value: Int) {
    switch kind {
    case .nested: outer.inner.value = value
    case .link:
      let inner = Inner()
      inner.value = value
      outer.inner = inner
    case .computed: computed.base = value
    case .observable: level.value = value
    }
  }

  var tracked: Int {
    switch kind {
    case .nested, .link: outer.inner.value
    case .computed: computed.value
    case .observable: level.value
    }
  }

  func bind(isolation: isolated (any Actor)? = #isolation) -> Chain<Int> {
    let chain = Bind.inout(flat, \.value)
    switch kind {
    case .nested, .link: chain.inout(outer, \.inner.value)
    case .computed: chain.inout(computed, \.value)
    case .observable: chain.inout(level, \.value)
    }
    return chain
  }
}

// Another thread sets `flat` to 1 and delivers it, held in a filter before it writes the
// members; `resume` lets it go on (after `meanwhile`, run once it goes on) and returns when that
// thread's set has returned. `calls`: what the chain's sink got.
private struct HeldDelivery {
  let calls = Calls()
  private let proceed: DispatchSemaphore
  private let done: DispatchSemaphore

  init(_ chain: Chain<Int>, setting flat: Flat) {
    let calls = calls
    let hook = Hook<Int>()
    let (entered, proceed) = hold(hook, at: 1)
    chain.out(key: "log") { calls.record($0) }
      .filter { value in
        hook(value)
        return true
      }
    done = startThread { flat.value = 1 }
    entered.wait()
    hook.set(nil)
    self.proceed = proceed
  }

  func resume(meanwhile: () -> Void = {}) {
    proceed.signal()
    meanwhile()
    done.wait()
  }
}

@Suite struct TrackedSetWhileDeliveringTests {
  @Test(arguments: TrackedMemberKind.allCases)
  func aSetMadeWhileAnotherThreadDeliversIsDelivered(_ kind: TrackedMemberKind) {
    let pair = Pair(kind: kind)
    let chain = pair.bind()
    let delivery = HeldDelivery(chain, setting: pair.flat)  // before the tracked member is written
    pair.setTracked(7)
    delivery.resume()
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 7)
    #expect(pair.flat.value == 7)
    #expect(pair.tracked == 7)
    #expect(delivery.calls.values == [0, 1, 7])
    chain.unbind()
  }

  // A re-read waiting for the delivery reads the latest, and a later change of what it reads
  // moves it last: after the changes accepted before that one, so the chain ends at the change
  // made last (Docs/Semantics.md, "Fair delivery").
  @Test(arguments: TrackedMemberKind.allCases)
  func aWaitingRereadGoesAfterWhatWasAcceptedBeforeTheLatestChange(_ kind: TrackedMemberKind) {
    let pair = Pair(kind: kind)
    let chain = pair.bind()
    let delivery = HeldDelivery(chain, setting: pair.flat)  // these three wait, in this order
    pair.setTracked(10)
    pair.flat.value = 2
    pair.setTracked(20)
    delivery.resume()
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 20)
    #expect(pair.flat.value == 20)
    #expect(pair.tracked == 20)
    #expect(delivery.calls.values == [0, 1, 2, 20])
    chain.unbind()
  }

  // The re-read that waited is held in its getter when what it reads is set again: it may read
  // that set and send it before the change accepted earlier, so the re-read the set queues sends
  // what it reads unless the chain holds it already, and the chain still ends at it.
  @Test func aSetWhileAWaitingRereadReadsIsTheChainsLastValue() {
    let flat = Flat()
    let member = HeldGetter()
    let chain = Bind.inout(flat, \.value).inout(member, \.value)
    let delivery = HeldDelivery(chain, setting: flat)
    let (reading, goOn) = hold(member.getterHook, at: 10)
    member.base = 10  // its re-read waits
    flat.value = 2  // and this change after it
    delivery.resume {
      reading.wait()  // the other thread reads the member again, held in its getter
      member.getterHook.set(nil)
      member.base = 20
      goOn.signal()
    }
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 20)
    #expect(flat.value == 20)
    #expect(member.base == 20)
    #expect(delivery.calls.values == [0, 1, 20, 2, 20])
    chain.unbind()
  }

  // A re-read that reads what its last read did not observe queues itself once more (its watch
  // counted nothing). That one is no set's: it compares with what it last read, and sends
  // nothing over a change accepted meanwhile (found by an independent review).
  @Test func aReadAgainThatARereadQueuesSendsOnlyAChange() {
    let flat = Flat()
    let gated = Gated()
    let chain = Bind.inout(flat, \.value).in(gated, \.value)
    let delivery = HeldDelivery(chain, setting: flat)
    gated.gate.on = true  // the member's re-read waits: it will read 5
    flat.value = 2  // accepted after it: the last change made
    delivery.resume()
    #expect(waitUntilIdle(chain))
    #expect(delivery.calls.values == [0, 1, 5, 2])
    #expect(chain.currentValue == 2)
    #expect(flat.value == 2)
    chain.unbind()
  }

  // The same read again, when a set made during the read has queued a re-read already, with a
  // change accepted after it: that re-read stays where it is, before that change, which the
  // chain ends at (found by an independent review).
  @Test func aReadAgainLeavesAWaitingRereadWhereItIs() {
    let flat = Flat()
    let gated = HeldGated()
    let chain = Bind.inout(flat, \.value).in(gated, \.value)
    let delivery = HeldDelivery(chain, setting: flat)
    let (reading, goOn) = hold(gated.readHook, at: 5)
    gated.gate.on = true  // the member's re-read waits: it will read `base`, and read again
    delivery.resume {
      reading.wait()  // the re-read has read 5, held in the getter
      gated.readHook.set(nil)
      gated.base = 9  // its re-read waits
      flat.value = 3  // accepted after it: the last change made
      goOn.signal()
    }
    #expect(waitUntilIdle(chain))
    #expect(delivery.calls.values == [0, 1, 5, 9, 3])
    #expect(chain.currentValue == 3)
    #expect(flat.value == 3)
    chain.unbind()
  }

  @MainActor
  @Test(arguments: TrackedMemberKind.allCases)
  func aRereadQueuedForTheMainActorGoesAfterWhatWasAcceptedBeforeTheLatestChange(
    _ kind: TrackedMemberKind
  ) async {
    let pair = Pair(kind: kind)
    let calls = Calls()
    let chain = pair.bind().out(key: "log") { calls.record($0) }
    startThread {
      pair.setTracked(10)
      pair.flat.value = 2
      pair.setTracked(20)
    }.wait()
    #expect(await waitUntilIdle(chain))
    #expect(chain.currentValue == 20)
    #expect(pair.flat.value == 20)
    #expect(pair.tracked == 20)
    #expect(calls.values == [0, 2, 20])
    chain.unbind()
  }

  @MainActor
  @Test(arguments: TrackedMemberKind.allCases)
  func changesQueuedForTheMainActorAreDeliveredInOrder(_ kind: TrackedMemberKind) async {
    let pair = Pair(kind: kind)
    let calls = Calls()
    let chain = pair.bind().out(key: "log") { calls.record($0) }
    startThread {
      pair.flat.value = 2
      pair.setTracked(4)
    }.wait()
    #expect(await waitUntilIdle(chain))
    #expect(chain.currentValue == 4)
    #expect(pair.flat.value == 4)
    #expect(pair.tracked == 4)
    #expect(calls.values == [0, 2, 4])
    chain.unbind()
  }
}

// A member whose getter or `==` (user code a write runs before it stores) holds the delivering
// thread while another thread sets the member: that set is newer than the value being written.
private final class Total: @unchecked Sendable {
  let getterHook = Hook<Int>()
  @Bound var base = 0
  var value: Int {
    get {
      getterHook(0)
      return base
    }
    set { base = newValue }
  }
}

private struct Reading: Equatable, Sendable {
  static let equalityHook = Hook<Int>()
  var value: Int
  static func == (lhs: Reading, rhs: Reading) -> Bool {
    equalityHook(0)
    return lhs.value == rhs.value
  }
}

private final class Meter: @unchecked Sendable {
  @Bound var reading = Reading(value: 0)
}

/// Where the write of the member holds: a computed property's getter, or a flat member's `==`.
enum HeldWriteKind: String, CaseIterable, Sendable {
  case computedGetter, flatEquality
}

extension TrackedSetWhileDeliveringTests {
  // Docs/Semantics.md, "Threading": a change of the member's own that waits is not written
  // over, also when it arrives while the write compares (its getter, `==`). Also when it sets
  // the value the member last sent (0): the chain still takes it. Serialized: the hooks are
  // shared by the cases.
  @Test(.serialized, arguments: HeldWriteKind.allCases, [7, 0])
  func aSetMadeWhileTheWriteComparesIsNotWrittenOver(_ kind: HeldWriteKind, setTo set: Int) {
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let holdOnce: @Sendable (Int) -> Void = { _ in
      entered.signal()
      proceed.wait()
    }
    let calls = Calls()
    switch kind {
    case .computedGetter:
      let head = Flat()
      let total = Total()
      let chain = Bind.inout(head, \.value).inout(total, \.value)
        .out(key: "log") { calls.record($0) }
      total.getterHook.set(holdOnce)
      let done = startThread { head.value = 1 }
      entered.wait()  // the write of `total` reads it, to compare
      total.getterHook.set(nil)
      total.value = set
      proceed.signal()
      done.wait()
      #expect(waitUntilIdle(chain))
      #expect(chain.currentValue == set)
      #expect(head.value == set)
      #expect(total.value == set)
      chain.unbind()
    case .flatEquality:
      let head = Meter()
      let meter = Meter()
      let chain = Bind.inout(head, \.reading).inout(meter, \.reading)
        .out(key: "log") { calls.record($0.value) }
      Reading.equalityHook.set(holdOnce)
      let done = startThread { head.reading = Reading(value: 1) }
      entered.wait()  // the write of `meter` compares its value
      Reading.equalityHook.set(nil)
      meter.reading = Reading(value: set)
      proceed.signal()
      done.wait()
      #expect(waitUntilIdle(chain))
      #expect(chain.currentValue.value == set)
      #expect(head.reading.value == set)
      #expect(meter.reading.value == set)
      chain.unbind()
    }
    #expect(calls.values == [0, 1, set])
  }
}
