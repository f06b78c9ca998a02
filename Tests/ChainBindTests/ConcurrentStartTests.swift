@_spi(Testing) import ChainBind
import Dispatch
import Observation
import Testing

// Docs/Semantics.md, "Chains and members" and "Threading": a chain started from a property that
// another thread binds at the same moment joins that thread's chain, as it would a moment later.
// Starting one looks the property up, reads it and then attaches it; a thread that attached the
// property in between used to have it moved out of its new chain, which then ended with no
// member, and the sinks added to it were refused.

private final class Form: @unchecked Sendable {
  @Bound var a = 0
  @Bound var b = 0
  let hold = HeldOnce()
  /// Holds the first reader once armed: inside a chain's start, between look-up and attach.
  var sum: Int {
    _ = hold.holds()
    return a + b
  }
}

private final class Flat: @unchecked Sendable {
  @Bound var value = 0
}

private final class Link: @unchecked Sendable {
  @Bound var value = 0
}

private final class Holder: @unchecked Sendable {
  @Bound var link = Link()
}

private final class Pair: @unchecked Sendable {
  @Bound var a = 0
  @Bound var b = 0
  var sum: Int { a + b }
}

@Observable
private final class Level: @unchecked Sendable {
  var value = 0
}

/// A computed property over a `@Bound` one, whose getter holds the first reader once armed.
private final class Offset: @unchecked Sendable {
  let hold = HeldOnce()
  @Bound var a = 0
  var next: Int {
    _ = hold.holds()
    return a + 1
  }
}

/// Runs the hook with 1 in its deinit: user code on the thread that releases it.
private final class Canary: @unchecked Sendable {
  let hook: Hook<Int>
  init(_ hook: Hook<Int>) { self.hook = hook }
  deinit { hook(1) }
}

private final class Rows: @unchecked Sendable {
  @Bound var items = [0]
}

/// A computed member's inputs, as a number and as a list.
private final class Inputs: @unchecked Sendable {
  @Bound var a = 0
  @Bound var b = 0
  var sum: Int { a + b }
  var list: [Int] { [a, b] }
}

private final class Gauge: @unchecked Sendable {
  private let storage = LockedBox(-1)
  var value: Int {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }
}

private final class Text: @unchecked Sendable {
  @Bound var text = ""
}

@Suite struct ConcurrentStartTests {
  /// What this thread does while the other is held inside its `Bind.in`.
  enum Meanwhile: String, CaseIterable, Sendable {
    /// Starts a chain from the same property: the held start joins it.
    case startsTheSame
    /// Adds the property to another chain of its type: the held start joins that one.
    case addsToAnotherChain
    /// Adds it to a chain of another value type: the held start moves it into a chain of its
    /// own, as a start from a member of such a chain does.
    case addsToAChainOfAnotherType
    /// Starts a chain from it and unbinds it again: the held start makes a chain of its own.
    case startsAndUnbinds
  }

  @Test(arguments: Meanwhile.allCases)
  func aStartHeldWhileAnotherThreadBindsTheProperty(_ meanwhile: Meanwhile) {
    let form = Form()
    let heldGauge = Gauge()
    let otherGauge = Gauge()
    let text = Text()
    let errors = LockedBox<[BindingError]>([])
    let heldChain = LockedBox<Chain<Int>?>(nil)
    form.hold.arm()
    let done = startThread {
      let chain = Bind.in(form, \.sum)
      chain.onError { error in errors.withLock { $0.append(error) } }
        .out(heldGauge, \.value)
      heldChain.withLock { $0 = chain }
    }
    guard form.hold.waitReached() else { return }
    var other: Chain<Int>?
    var otherText: Chain<String>?
    switch meanwhile {
    case .startsTheSame:
      other = Bind.in(form, \.sum).out(otherGauge, \.value)
    case .addsToAnotherChain:
      let source = Flat()
      other = Bind.inout(source, \.value).in(form, \.sum).out(otherGauge, \.value)
    case .addsToAChainOfAnotherType:
      otherText = Bind.inout(text, \.text).in(form, \.sum)
    case .startsAndUnbinds:
      other = Bind.in(form, \.sum).out(otherGauge, \.value)
      Bind.unbind(form, \.sum)
    }
    form.hold.resume()
    guard done.wait(timeout: .now() + 60) == .success else {
      Issue.record("the held start did not return")
      return
    }
    guard let chain = heldChain.withLock({ $0 }) else { return }
    #expect(errors.withLock { $0 }.isEmpty)
    #expect(chain.isActive)
    form.a = 5
    #expect(heldGauge.value == 5)
    switch meanwhile {
    case .startsTheSame, .addsToAnotherChain:
      #expect(chain.code == other?.code)
      #expect(otherGauge.value == 5)
    case .addsToAChainOfAnotherType:
      #expect(chain.code != otherText?.code)
      #expect(text.text != "5")  // moved out of the text's chain
    case .startsAndUnbinds:
      #expect(chain.code != other?.code)
      #expect(other?.isActive == false)
    }
  }

  enum Kind: String, CaseIterable, Sendable {
    case flat, nested, computed, observable
  }

  /// Two threads start a chain from one property at once, many times.
  ///
  /// Each time one chain, with both sinks, which a set reaches. Randomized by the scheduler.
  @Test(arguments: Kind.allCases)
  func twoThreadsStartingFromOnePropertyMakeOneChain(_ kind: Kind) {
    let rounds = 1_000
    var split = 0
    var missed = 0
    var firstMiss: String?
    for _ in 0..<rounds {
      let flat = Flat()
      let holder = Holder()
      let pair = Pair()
      let level = Level()
      let chains = LockedBox<[Int: Chain<Int>]>([:])
      let calls = LockedBox<[Int: Int]>([:])
      let ready = DispatchSemaphore(value: 0)
      let go = DispatchSemaphore(value: 0)
      let done = (0..<2).map { index in
        startThread {
          ready.signal()
          go.wait()
          let chain: Chain<Int>
          switch kind {
          case .flat: chain = Bind.in(flat, \.value)
          case .nested: chain = Bind.in(holder, \.link.value)
          case .computed: chain = Bind.in(pair, \.sum)
          case .observable: chain = Bind.in(level, \.value)
          }
          chain.out(key: "sink\(index)", initial: false) { value in
            calls.withLock { $0[index, default: 0] += value == 7 ? 1 : 0 }
          }
          chains.withLock { $0[index] = chain }
        }
      }
      ready.wait()
      ready.wait()
      go.signal()
      go.signal()
      for thread in done where thread.wait(timeout: .now() + 60) != .success {
        Issue.record("a start did not return")
        return
      }
      let made = chains.withLock { $0 }
      guard let first = made[0], let second = made[1] else { return }
      if first.code != second.code || !first.isActive || first.sinkCount != 2 {
        split += 1
        continue
      }
      // The join's first read may still run on a relay; set once it is done, so that this
      // thread's store does not race with that read of a property that is not thread-safe.
      guard waitUntilIdle(first) else {
        Issue.record("the chain did not become idle after the starts")
        return
      }
      switch kind {
      case .flat: flat.value = 7
      case .nested: holder.link.value = 7
      case .computed: pair.a = 7
      case .observable: level.value = 7
      }
      guard waitUntilIdle(first) else {
        Issue.record("the chain did not become idle")
        return
      }
      let seen = calls.withLock { $0 }
      if seen != [0: 1, 1: 1] {
        missed += 1
        firstMiss = firstMiss ?? "calls with the value set, by sink: \(seen); \(first)"
      }
    }
    #expect(split == 0, "rounds of \(rounds) that did not end in one chain with both sinks")
    #expect(
      missed == 0,
      "rounds of \(rounds) whose set did not reach both sinks once; the first: \(firstMiss ?? "")")
  }

  enum LateSink: String, CaseIterable, Sendable {
    case keyed, owned, list
  }

  /// A set made after a sink was added with `initial: false` reaches it.
  ///
  /// Here the sink is added while another thread delivers and a computed member's re-read
  /// waits. The re-read, queued before the sink, reads that set; the sink used to wait for its
  /// turn behind it, and missed it.
  @Test(arguments: LateSink.allCases)
  func aSinkAddedWithoutAFirstCallGetsWhatIsSetAfterIt(_ late: LateSink) {
    let inputs = Inputs()
    let hook = Hook<Int>()
    let owner = Gauge()
    let seen = LockedBox<[String]>([])
    // One chain, which waits in its "hold" sink, on the thread that set `a`.
    let chain = late == .list ? nil : Bind.in(inputs, \.sum)
    let listChain = late == .list ? Bind.in(inputs, \.list) : nil
    chain?.out(key: "hold", initial: false) { hook($0) }
    listChain?.out(key: "hold", initial: false) { hook($0[0]) }
    let (entered, proceed) = hold(hook, at: 100)
    let held = startThread { inputs.a = 100 }
    entered.wait()
    hook.set(nil)
    inputs.b = 1  // the re-read waits for the held delivery
    switch late {
    case .keyed:
      chain?.out(key: "late", initial: false) { sum in seen.withLock { $0.append("\(sum)") } }
    case .owned:
      chain?.out(owner, key: "late", initial: false) { _, sum in
        seen.withLock { $0.append("\(sum)") }
      }
    case .list:
      listChain?.outChanges(key: "late", initial: false) { change in
        seen.withLock { $0.append("\(change.old)→\(change.new)") }
      }
    }
    inputs.b = 2  // after the sink was added
    proceed.signal()
    guard held.wait(timeout: .now() + 60) == .success else {
      Issue.record("the held set did not return")
      return
    }
    if let chain { #expect(waitUntilIdle(chain)) }
    if let listChain { #expect(waitUntilIdle(listChain)) }
    switch late {
    case .keyed, .owned: #expect(seen.withLock { $0 } == ["102"])
    case .list: #expect(seen.withLock { $0 } == ["[100, 0]→[100, 2]"])
    }
  }

  /// Where the property is when a held join of its chain goes on.
  enum Moved: String, CaseIterable, Sendable {
    /// Into another chain; the chain joined had no other sender, and ended.
    case outOfItsOnlySender
    /// Into another chain; the chain joined keeps another sender.
    case outOfAChainThatGoesOn
  }

  /// A start held while it joins its property's chain joins the chain the property moved to.
  ///
  /// It is held inside the getter, between its look-up and its attach, while this thread moves
  /// the property into another chain; it joins that chain, as it would have a moment later. It
  /// used to get the first chain back, ended, or move the property back out of the other one.
  @Test(arguments: Moved.allCases)
  func aJoinHeldWhileAnotherThreadMovesTheProperty(_ moved: Moved) {
    let offset = Offset()
    let other = Flat()
    let first = Bind.in(offset, \.next)
    if moved == .outOfAChainThatGoesOn { first.in(other, \.value) }
    let errors = LockedBox<[BindingError]>([])
    first.onError { error in errors.withLock { $0.append(error) } }
    let joined = LockedBox<Chain<Int>?>(nil)
    offset.hold.arm()
    let done = startThread { joined.withLock { $0 = Bind.in(offset, \.next) } }
    guard offset.hold.waitReached() else { return }
    let source = Flat()
    let second = Bind.in(source, \.value).in(offset, \.next)
    offset.hold.resume()
    guard done.wait(timeout: .now() + 60) == .success else {
      Issue.record("the held start did not return")
      return
    }
    #expect(joined.withLock { $0 }?.code == second.code)
    #expect(joined.withLock { $0 }?.isActive == true)
    #expect(second.memberCount == 2)
    #expect(errors.withLock { $0 }.isEmpty)
    switch moved {
    case .outOfItsOnlySender: #expect(!first.isActive)
    case .outOfAChainThatGoesOn: #expect(first.memberCount == 1)
    }
    let gauge = Gauge()
    second.out(gauge, \.value)
    offset.a = 4
    #expect(waitUntilIdle(second))
    #expect(gauge.value == 5)
    withExtendedLifetime(source) {}
  }

  /// A list sink added without a first call starts from the chain's list when it was added.
  ///
  /// The adding thread is held in a deinit its addition runs (pruning a sink whose owner is
  /// gone) while this thread changes the list.
  @Test func aListSinkWithoutAFirstCallStartsFromTheListWhenAdded() {
    let rows = Rows()
    let chain = Bind.in(rows, \.items)
    let hook = Hook<Int>()
    do {
      let gone = Gauge()
      let canary = Canary(hook)
      chain.out(gone, key: "gone", initial: false) { _, _ in withExtendedLifetime(canary) {} }
    }
    let (entered, proceed) = hold(hook, at: 1)
    let owner = Gauge()
    let seen = LockedBox<[String]>([])
    let adding = startThread {
      chain.outChanges(owner, key: "late", initial: false) { _, change in
        seen.withLock { $0.append("\(change.old)→\(change.new)") }
      }
    }
    guard entered.wait(timeout: .now() + 60) == .success else {
      Issue.record("the adding thread was not held")
      return
    }
    hook.set(nil)
    rows.items = [1]  // delivered before the sink is added
    proceed.signal()
    guard adding.wait(timeout: .now() + 60) == .success else {
      Issue.record("the addition did not return")
      return
    }
    rows.items = [2]
    #expect(waitUntilIdle(chain))
    #expect(seen.withLock { $0 } == ["[1]→[2]"])
    withExtendedLifetime(owner) {}
  }
}
