@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Observation
import Testing

// Docs/Semantics.md, "Threading": once things settle, every member shows the chain's latest
// value, under any interleaving of threads. Here not one interleaving held with semaphores, nor
// random ones, but all of them: `Explorer` runs each scenario once per order of its threads'
// steps (ChainBind's schedule points, and points in the scenario's own getters, setters and
// sinks), and checks every member at the end of each run.

private final class Counter: @unchecked Sendable {
  @Bound var n = 0
}

/// A receiver that stops at a schedule point inside its setter.
private final class Label: @unchecked Sendable {
  let explorer: Explorer
  var value = -1 {
    didSet { explorer.point() }
  }
  init(_ explorer: Explorer) { self.explorer = explorer }
}

/// Reads `a` or `b`, as its flag says.
///
/// The flag is a `@Bound` property or an `@Observable` one; the getter stops at a schedule point
/// between reading the flag and reading the input.
private final class Branch: @unchecked Sendable {
  let explorer: Explorer
  let observableFlag: Bool
  let meter = Meter()
  @Bound var readsA = true
  @Bound var a = 0
  @Bound var b = 0
  // How many times the getter ran, read after the threads finished.
  let reads = LockedBox(0)
  var value: Int {
    reads.withLock { $0 += 1 }
    let readsA = observableFlag ? meter.level == 0 : self.readsA
    explorer.point()
    return readsA ? a : b
  }
  init(_ explorer: Explorer, observableFlag: Bool) {
    self.explorer = explorer
    self.observableFlag = observableFlag
  }
  func flip() {
    if observableFlag { meter.level = 1 } else { readsA = false }
  }
}

/// A `@Bound` input and an `@Observable` one, and their sum, which stops at a schedule point
/// between its reads.
private final class MixedSum: @unchecked Sendable {
  let explorer: Explorer
  let readsBoundFirst: Bool
  let meter = Meter()
  @Bound var a = 0
  var sum: Int {
    if readsBoundFirst {
      let a = self.a
      explorer.point()
      return a + meter.level
    }
    let level = meter.level
    explorer.point()
    return a + level
  }
  init(_ explorer: Explorer, readsBoundFirst: Bool) {
    self.explorer = explorer
    self.readsBoundFirst = readsBoundFirst
  }
}

/// Two `@Bound` inputs and a computed sum that stops at a schedule point between its reads.
private final class Sums: @unchecked Sendable {
  let explorer: Explorer
  @Bound var a = 0
  @Bound var b = 0
  var sum: Int {
    let a = self.a
    explorer.point()
    return a + b
  }
  init(_ explorer: Explorer) { self.explorer = explorer }
}

private final class Inner: @unchecked Sendable {
  @Bound var text: String
  init(_ text: String) { self.text = text }
}

private final class Outer: @unchecked Sendable {
  @Bound var inner = Inner("first")
}

private final class Source: @unchecked Sendable {
  let explorer: Explorer
  @Bound var text = "" {
    didSet { explorer.point() }
  }
  init(_ explorer: Explorer) { self.explorer = explorer }
}

/// A view whose computed `display` reads `outer.inner.text`, with a hook after the read.
private final class LinkView: @unchecked Sendable {
  let outer = Outer()
  let hook = Hook<String>()
  var display: String {
    let text = outer.inner.text
    hook(text)
    return text
  }
}

/// What a run kept alive and must check once its threads finished.
@Observable
private final class Meter: @unchecked Sendable {
  var level = 0
}

/// `level`, read by a getter that, once armed, holds its first caller after reading it.
@Observable
private final class HeldLevel: @unchecked Sendable {
  var level = 0
  @ObservationIgnored let hold = HeldOnce()
  var shown: Int {
    let level = level
    _ = hold.holds()
    return level
  }
}

/// `level`, read by a getter that calls `hook` after the read.
@Observable
private final class HookedLevel: @unchecked Sendable {
  var level = 0
  @ObservationIgnored let hook = Hook<Int>()
  var shown: Int {
    let level = level
    hook(level)
    return level
  }
}

/// Checks, after a race over `level`'s watches, that the chain ended at `last`.
///
/// The watches the race left armed do not multiply the reads either: one that covered a read
/// may read once more, at the next set; each set after reads once. Unbinds the chain.
private func expectSettled(
  _ chain: Chain<Int>, at last: Int, _ level: HookedLevel, _ seen: LockedBox<[Int]>
) {
  #expect(waitUntilIdle(chain))
  #expect(chain.currentValue == last)
  #expect(seen.withLock { $0.last } == last)
  let reads = LockedBox(0)
  level.hook.set { _ in reads.withLock { $0 += 1 } }
  level.level = last + 1
  #expect(seen.withLock { $0.last } == last + 1)
  #expect(reads.withLock { $0 } <= 2)
  for next in last + 2...last + 4 {
    reads.withLock { $0 = 0 }
    level.level = next
    #expect(seen.withLock { $0.last } == next)
    #expect(reads.withLock { $0 } == 1)
  }
  level.hook.set(nil)
  chain.unbind()
}

private final class IntLabel: @unchecked Sendable {
  let explorer: Explorer
  var value = -1 {
    didSet { explorer.point() }
  }
  init(_ explorer: Explorer) { self.explorer = explorer }
}

private final class Kept: @unchecked Sendable {
  var chains: [Chain<Int>] = []
}

/// Runs `held` on a new thread, stopped at its first schedule point (`Bind.withSchedulePoints`)
/// until `meanwhile` has run on this thread; returns when both are done.
private func holdAtFirstSchedulePoint(
  _ held: @escaping @Sendable () -> Void, meanwhile: () -> Void
) {
  let heldThread = LockedBox<UInt?>(nil)
  let arrived = DispatchSemaphore(value: 0)
  let proceed = DispatchSemaphore(value: 0)
  Bind.withSchedulePoints({
    guard heldThread.withLock({ $0 }) == currentThreadNumber() else { return }
    heldThread.withLock { $0 = nil }
    arrived.signal()
    proceed.wait()
  }) {
    let done = startThread {
      heldThread.withLock { $0 = currentThreadNumber() }
      held()
    }
    // A guard, not a synchronisation: a thread that never reaches a point fails the test.
    if arrived.wait(timeout: .now() + 20) == .timedOut {
      Issue.record("the held thread reached no schedule point")
    } else {
      meanwhile()
    }
    proceed.signal()
    done.wait()
  }
}

/// A text field whose user types on one thread while the chain may write it on another.
private final class Field: ControlEventSource, @unchecked Sendable {
  enum Event { case editingChanged }
  let controlEvents = ControlEvents<Event>()
  var text = ""

  func userTypes(_ newText: String) {
    text = newText
    controlEvents.send(.editingChanged)
  }
}

/// The last reference to a link, released on the thread a test holds (touched by one thread at a
/// time, in the test's order).
private final class Holder: @unchecked Sendable {
  var inner: Inner?
  init(_ inner: Inner) { self.inner = inner }
}

/// A receiver of text.
private final class Gauge: @unchecked Sendable {
  var text = ""
}

/// A chain's sink calls, in order.
private final class Calls: @unchecked Sendable {
  let values = LockedBox<[Int]>([])
}

@Suite(
  "Interleavings: every order of a few threads' steps settles at the latest value", .serialized)
struct InterleavingTests {
  /// The most schedules a scenario may have, unless it gives its own: each one below has fewer,
  /// and is run exhaustively.
  static let limit = 5_000

  private func expectExhaustive(
    _ explorer: Explorer, _ outcome: (failure: Explorer.Failure?, isExhausted: Bool)
  ) {
    #expect(outcome.failure == nil, "\(outcome.failure.map(String.init(describing:)) ?? "")")
    #expect(outcome.isExhausted, "stopped after \(explorer.runs) schedules")
    // At least two orders: the scenario's threads did interleave.
    #expect(explorer.runs > 1)
  }

  @Test("a receiver added while another thread sets the head twice: it ends at the head's value")
  func receiverAddedWhileAnotherThreadSets() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let model = Counter()
      let label = Label(explorer)
      let added = Label(explorer)
      let chain = Bind.inout(model, \.n).out(label, \.value)
      return (
        [
          {
            model.n = 1
            model.n = 2
          },
          { chain.out(added, \.value) },
        ],
        {
          guard label.value == model.n, added.value == model.n else {
            return "label \(label.value), added \(added.value), model \(model.n)"
          }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  // Progress (Docs/Semantics.md, "Fair delivery"): a thread that keeps setting never makes another
  // thread's call deliver its changes. In every order, the adding thread's call takes at most
  // three steps (its start, the point its work reaches, the point in the sink's first call),
  // however many sets the other thread makes meanwhile: they go to a relay. On 0.3 the adder
  // became their deliverer, and wrote the label and called the sink for each (a point each).
  @Test("a sink added while another thread keeps setting: the adder's call takes bounded steps")
  func sinkAddedWhileAnotherThreadKeepsSetting() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let model = Counter()
      let label = Label(explorer)
      let calls = Calls()
      let chain = Bind.inout(model, \.n).out(label, \.value)
      return (
        [
          { for value in 1...3 { model.n = value } },
          {
            chain.out(key: "late") { value in
              calls.values.withLock { $0.append(value) }
              explorer.point()
            }
          },
        ],
        {
          withExtendedLifetime(chain) {}
          guard explorer.steps[1] <= 3 else {
            return "the adder took \(explorer.steps[1]) steps"
          }
          let seen = calls.values.withLock { $0 }
          guard label.value == model.n, seen.last == model.n,
            zip(seen, seen.dropFirst()).allSatisfy({ $0 < $1 })
          else { return "label \(label.value), late sink \(seen), model \(model.n)" }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  // The same for a two-way pair: one thread keeps setting one end, another sets the other end
  // once; that set takes bounded steps in every order, and both ends agree at the end.
  @Test("one end of a two-way pair set while another thread keeps setting the other: bounded")
  func twoWayPairSetWhileAnotherThreadKeepsSetting() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let left = Counter()
      let right = Counter()
      let label = Label(explorer)
      let chain = Bind.inout(left, \.n).inout(right, \.n).out(label, \.value)
      return (
        [{ for value in 1...3 { left.n = value } }, { right.n = 10 }],
        {
          withExtendedLifetime(chain) {}
          // Its start, its set's point, and the label write of its own change.
          guard explorer.steps[1] <= 3 else {
            return "the other end's set took \(explorer.steps[1]) steps"
          }
          guard left.n == right.n, label.value == left.n else {
            return "left \(left.n), right \(right.n), label \(label.value)"
          }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  // A delivery on one thread may write a sending member between another thread's set of it and
  // that set's delivery: the set's delivery then writes the member too.
  @Test("a set at each end of a two-way pair: both ends agree")
  func twoWayPairSetAtBothEnds() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let left = Counter()
      let right = Counter()
      let label = Label(explorer)
      let chain = Bind.inout(left, \.n).inout(right, \.n).out(label, \.value)
      return (
        [{ left.n = 1 }, { right.n = 2 }],
        {
          withExtendedLifetime(chain) {}
          guard left.n == right.n, label.value == left.n else {
            return "left \(left.n), right \(right.n), label \(label.value)"
          }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  // The same race, held with semaphores: one thread stopped between its set and that set's
  // delivery (at the library's schedule point) while another thread delivers.
  @Test("a set held before its delivery while another thread's delivery writes the same member")
  func setHeldBeforeItsDelivery() {
    let left = Counter()
    let right = Counter()
    let label = Label(Explorer())
    let chain = Bind.inout(left, \.n).inout(right, \.n).out(label, \.value)
    // `right` holds 2, and its change is not delivered yet: this thread's change, delivered
    // here at once, writes 1 into `right`.
    holdAtFirstSchedulePoint({ right.n = 2 }) {
      left.n = 1
      #expect(right.n == 1)
    }
    // The held change was delivered last, and wrote `right` back.
    #expect(chain.currentValue == 2)
    #expect(left.n == 2)
    #expect(right.n == 2)
    #expect(label.value == 2)
    chain.unbind()
  }

  // A change Observation chose a watch for (the one that fired before, kept armed during the
  // re-read it started, which has read the property), held before that watch's call while the
  // re-read arms its own watch and cancels the older: the late call still reads again.
  @Test("an @Observable change held before its watch's call while the watch is cancelled")
  func observableChangeHeldWhileItsWatchIsCancelled() {
    let gauge = HeldLevel()
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(gauge, \.shown).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    gauge.hold.arm()
    // Thread A's change fires the watch; the re-read it starts reads 1 and is held.
    let changing = startThread { gauge.level = 1 }
    #expect(gauge.hold.waitReached())
    // Thread B's change is stored; Observation chose the kept watch only. B is held before the
    // call while A's re-read ends: it arms its own watch and cancels the kept one.
    holdAtFirstSchedulePoint({ gauge.level = 2 }) {
      gauge.hold.resume()
      #expect(changing.wait(timeout: .now() + 30) == .success)
    }
    #expect(waitUntilIdle(chain))
    #expect(seen.withLock { $0 } == [0, 1, 2])
    gauge.level = 3
    #expect(seen.withLock { $0.last } == 3)
    chain.unbind()
  }

  // The same, in a main-actor chain: a set made elsewhere held before it is queued for the actor,
  // while the actor's delivery writes the same member.
  @Test("a set held before it is queued for the actor while the actor writes the same member")
  @MainActor
  func setHeldBeforeItIsQueuedForTheActor() async {
    let left = Counter()
    let right = Counter()
    let chain = Bind.inout(left, \.n).inout(right, \.n)  // isolated to the main actor
    // `right` holds 2, and its change is not queued yet: this change, delivered on the actor at
    // once, writes 1 into `right`.
    holdAtFirstSchedulePoint({ right.n = 2 }) {
      left.n = 1
      #expect(right.n == 1)
    }
    // The actor runs the change queued for it (within a bound, which fails the test).
    let deadline = ContinuousClock.now + .seconds(20)
    while chain.currentValue != 2 && ContinuousClock.now < deadline { await Task.yield() }
    #expect(chain.currentValue == 2)
    #expect(left.n == 2)
    #expect(right.n == 2)
    chain.unbind()
  }

  // A tracked member stops observing a property whose object is being deallocated on another
  // thread: it reaches the token in its deinit, unretained (Tracking.swift), and the deinit,
  // once it goes on, finds the member no longer observing it.
  @Test("a re-read stops observing a token whose deinit another thread is running")
  func rereadMeetsADyingToken() {
    let view = LinkView()
    let first = Holder(view.outer.inner)
    weak let firstGone = view.outer.inner
    let label = Gauge()
    let chain = Bind.in(view, \.display).out(label, \.text)
    let second = Inner("second")
    let rereading = DispatchSemaphore(value: 0)
    let reread = DispatchSemaphore(value: 0)
    // Held in the re-read's getter, after it read the new link and before it observes it.
    view.hook.set { text in
      guard text == "second" else { return }
      rereading.signal()
      reread.wait()
    }
    let replacing = startThread { view.outer.inner = second }
    rereading.wait()
    // The last reference to the first link, released on a thread held in the link's token's
    // deinit, before it tells the tracked member.
    holdAtFirstSchedulePoint({ first.inner = nil }) {
      reread.signal()  // observes the new link, stops observing the dying one
      replacing.wait()
    }
    view.hook.set(nil)
    #expect(firstGone == nil)
    #expect(label.text == "second")
    second.text = "third"  // observed: the re-read's observation holds
    #expect(label.text == "third")
    #expect(chain.currentValue == "third")
    chain.unbind()
  }

  // The race of `twoWayPairSetAtBothEnds`, with a control at one end: it sends what it reads
  // when its event fires.
  @Test("the user types in a field while another thread sets its model: both agree")
  func controlAndModelChangedOnTwoThreads() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let model = Inner("")
      let field = Field()
      let chain = Bind.inout(model, \.text).inout(field, \.text, on: .editingChanged)
      return (
        [{ field.userTypes("typed") }, { model.text = "set" }],
        {
          withExtendedLifetime(chain) {}
          guard model.text == field.text else {
            return "model \"\(model.text)\", field \"\(field.text)\""
          }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("each end of a two-way pair set twice, on its own thread: both ends agree")
  func twoWayPairSetTwiceAtBothEnds() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let left = Counter()
      let right = Counter()
      let chain = Bind.inout(left, \.n).inout(right, \.n)
      return (
        [
          {
            left.n = 1
            left.n = 3
          },
          {
            right.n = 2
            right.n = 4
          },
        ],
        {
          withExtendedLifetime(chain) {}
          return left.n == right.n ? nil : "left \(left.n), right \(right.n)"
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("two threads change a computed member's two inputs: it ends at their sum")
  func computedInputsChangedOnTwoThreads() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let sums = Sums(explorer)
      let label = Label(explorer)
      let chain = Bind.in(sums, \.sum).out(label, \.value)
      return (
        [{ sums.a = 1 }, { sums.b = 10 }],
        {
          withExtendedLifetime(chain) {}
          let sum = sums.a + sums.b
          return label.value == sum ? nil : "label \(label.value), sum \(sum)"
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("a computed member bound while another thread changes an input: it ends at the sum")
  func computedBoundWhileAnInputChanges() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let sums = Sums(explorer)
      let label = Label(explorer)
      let kept = Kept()
      return (
        [{ kept.chains.append(Bind.in(sums, \.sum).out(label, \.value)) }, { sums.a = 5 }],
        {
          withExtendedLifetime(kept) {}
          let sum = sums.a + sums.b
          return label.value == sum ? nil : "label \(label.value), sum \(sum)"
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("a computed member bound while another thread unbinds its object: bound, or all gone")
  func computedBoundWhileItsObjectIsUnbound() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let sums = Sums(explorer)
      let label = Label(explorer)
      let kept = Kept()
      return (
        [{ kept.chains.append(Bind.in(sums, \.sum).out(label, \.value)) }, { Bind.unbind(sums) }],
        {
          guard let isActive = kept.chains.first?.isActive else { return "not bound" }
          let before = label.value
          sums.a = 7
          if isActive {
            // Bound after the unbind: it follows the sum.
            return label.value == 7 + sums.b ? nil : "bound: label \(label.value)"
          }
          // Unbound: the member's source ended with it, nothing reaches the label, and nothing
          // keeps the chain (a source set after the member was detached kept it, with a cycle).
          if label.value != before { return "unbound, yet the label became \(label.value)" }
          weak let state = kept.chains.first?.stateObject
          kept.chains.removeAll()
          return state == nil ? nil : "unbound, yet the chain's state is kept"
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("a sink added while another thread delivers: its first call first, then each change")
  func sinkAddedWhileAnotherThreadDelivers() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let model = Counter()
      let label = Label(explorer)
      let calls = Calls()
      let chain = Bind.inout(model, \.n).out(label, \.value)
      return (
        [
          {
            model.n = 1
            model.n = 2
          },
          {
            chain.out(key: "log") { value in
              calls.values.withLock { $0.append(value) }
              explorer.point()
            }
          },
        ],
        {
          let values = calls.values.withLock { $0 }
          guard values == values.sorted(), Set(values).count == values.count,
            values.last == model.n, label.value == model.n
          else { return "sink calls \(values), label \(label.value), model \(model.n)" }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  // The race of `twoWayPairSetAtBothEnds`, through a nested path.
  @Test("a path's last property set while another thread replaces a link: the new path wins")
  func pathLeafSetWhileALinkIsReplaced() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let outer = Outer()
      let old = outer.inner
      let label = Gauge()
      let chain = Bind.in(outer, \.inner.text).out(label, \.text)
      return (
        [{ old.text = "zombie" }, { outer.inner = Inner("replaced") }],
        {
          withExtendedLifetime(chain) {}
          let expected = outer.inner.text
          return label.text == expected ? nil : "label \"\(label.text)\", path \"\(expected)\""
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("an @Observable property bound while another thread sets it: the member ends at it")
  func observableBoundWhileSet() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let meter = Meter()
      let label = IntLabel(explorer)
      let kept = Kept()
      return (
        [{ kept.chains.append(Bind.in(meter, \.level).out(label, \.value)) }, { meter.level = 5 }],
        {
          withExtendedLifetime(kept) {}
          guard label.value == meter.level else {
            return "label \(label.value), level \(meter.level)"
          }
          #if os(Linux)
            // The watch is still armed: a later set reaches the label (at once, on Linux).
            meter.level = 7
            if label.value != 7 { return "after a later set, label \(label.value)" }
          #endif
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  @Test("a nested path written by its chain while another thread replaces the link: they agree")
  func nestedLinkReplacedWhileTheChainWrites() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let source = Source(explorer)
      let outer = Outer()
      let chain = Bind.inout(source, \.text).inout(outer, \.inner.text)
      return (
        [{ source.text = "typed" }, { outer.inner = Inner("replaced") }],
        {
          withExtendedLifetime(chain) {}
          guard source.text == outer.inner.text else {
            return "source \"\(source.text)\", path \"\(outer.inner.text)\""
          }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }
}

/// Two `@Bound` inputs, their sum, and a path to a third, for joins.
private final class Totals: @unchecked Sendable {
  @Bound var a = 0
  @Bound var b = 0
  var total: Int { a + b }
  @Bound var inner = Counter()
}

extension InterleavingTests {
  enum TrackedKind: CaseIterable { case computed, path }

  // A set's re-read held before it takes the chain's turn while a join replaces the member:
  // the join's read has read the set's value already, and the re-read finds its member gone.
  // The set's value still reaches the chain, through the member that replaced it.
  @Test(
    "a tracked member joined while a set's re-read waits: the chain gets the set",
    arguments: TrackedKind.allCases)
  func joinWhileASetsRereadWaits(_ kind: TrackedKind) {
    let totals = Totals()
    let label = Plain()
    let keyPath: KeyPath<Totals, Int> = kind == .computed ? \.total : \.inner.n
    let chain = Bind.in(totals, keyPath).out(label, \.int)
    holdAtFirstSchedulePoint({
      if kind == .computed { totals.a = 1 } else { totals.inner.n = 1 }
    }) {
      chain.in(totals, keyPath)
    }
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 1)
    #expect(label.int == 1)
    if kind == .computed { totals.b = 1 } else { totals.inner.n = 2 }
    #expect(label.int == 2)
    #expect(chain.memberCount == 2)
    chain.unbind()
  }

  @Test("a computed member joined while another thread changes an input: it ends at the sum")
  func computedJoinedWhileAnInputChanges() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit) {
      let sums = Sums(explorer)
      let label = Label(explorer)
      let chain = Bind.in(sums, \.sum).out(label, \.value)
      return (
        [{ chain.in(sums, \.sum) }, { sums.a = 5 }],
        {
          let sum = sums.a + sums.b
          defer { chain.unbind() }
          return label.value == sum && chain.currentValue == sum
            ? nil : "label \(label.value), chain \(chain.currentValue), sum \(sum)"
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }

  // A set while a second queued re-read reads, before its watch is armed. Thread A delivers the
  // chain; this thread's set fires the watch of A's last read and queues a re-read, which A
  // leaves to a relay (held, then run by thread R). R is held where that re-read begins while
  // this thread sets again: the same watch fires, and a second re-read is queued. The first
  // arms a watch; the second begins before that watch fired, and is held in the getter after
  // reading: a set now fires only that older watch, and the second re-read's own watch is
  // armed after it. The older watch must re-read.
  @Test("an @Observable set while a second queued re-read reads: the member ends at it")
  func observableSetWhileASecondQueuedRereadReads() {
    let level = HookedLevel()
    let sinkHold = HeldOnce()
    let pointHold = HeldOnce()
    let getterHold = HeldOnce()
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(level, \.shown).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
      _ = sinkHold.holds()
    }
    let changer = LockedBox<UInt?>(nil)
    let runner = LockedBox<UInt?>(nil)
    Bind.withSchedulePoints(
      {
        if currentThreadNumber() == runner.withLock({ $0 }) { _ = pointHold.holds() }
      },
      holdingRelays: { currentThreadNumber() == changer.withLock { $0 } }
    ) {
      sinkHold.arm()
      let a = startThread {
        changer.withLock { $0 = currentThreadNumber() }
        level.level = 1
      }
      guard sinkHold.waitReached() else { return }
      level.level = 2  // queued: A delivers
      sinkHold.resume()
      #expect(a.wait(timeout: .now() + 30) == .success)
      pointHold.arm()
      let r = startThread {
        runner.withLock { $0 = currentThreadNumber() }
        Bind.runHeldRelays()
      }
      guard pointHold.waitReached() else { return }
      level.level = 3  // fires the same watch: a second re-read is queued
      let reads = LockedBox(0)
      level.hook.set { _ in
        let read = reads.withLock { count in
          count += 1
          return count
        }
        if read == 2 { _ = getterHold.holds() }
      }
      getterHold.arm()
      pointHold.resume()
      guard getterHold.waitReached() else { return }
      level.level = 4  // stored before the held re-read's watch is armed
      getterHold.resume()
      #expect(r.wait(timeout: .now() + 30) == .success)
    }
    expectSettled(chain, at: 4, level, seen)
  }
}

extension InterleavingTests {
  // A watch's call that Observation chose before another thread's re-read cancelled the watch
  // re-reads at once, not waiting: that read begins with only the other read's watch armed,
  // which has not fired. A set made while it reads, before its own watch is armed, fires only
  // that watch. Here A's call is held where it begins while this thread sets (its re-read arms
  // the newer watch and cancels A's), then A's re-read is held in the getter while this thread
  // sets again.
  @Test("an @Observable set while a cancelled watch's call re-reads: the member ends at it")
  func observableSetWhileACancelledWatchRereads() {
    let level = HookedLevel()
    let pointHold = HeldOnce()
    let getterHold = HeldOnce()
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(level, \.shown).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    let firing = LockedBox<UInt?>(nil)
    Bind.withSchedulePoints({
      if currentThreadNumber() == firing.withLock({ $0 }) { _ = pointHold.holds() }
    }) {
      pointHold.arm()
      let a = startThread {
        firing.withLock { $0 = currentThreadNumber() }
        level.level = 1  // held where its watch's call begins
      }
      guard pointHold.waitReached() else { return }
      level.level = 2  // the same watch's call here: re-read at once, A's watch cancelled
      level.hook.set { _ in
        if currentThreadNumber() == firing.withLock({ $0 }) { _ = getterHold.holds() }
      }
      getterHold.arm()
      pointHold.resume()
      guard getterHold.waitReached() else { return }
      level.level = 3  // stored before A's re-read arms its watch
      getterHold.resume()
      #expect(a.wait(timeout: .now() + 30) == .success)
    }
    expectSettled(chain, at: 3, level, seen)
  }
}

extension InterleavingTests {
  // One thread sets an `@Observable` property once, its read held in the getter, while another
  // sets it twice: a set may fire two watches (the last read's, and one kept armed until a later
  // read has armed its own), which Observation calls in the order of its hash tables, seeded per
  // instance. The same picks may then reach other points in another run (`Explorer`'s `varies`).
  @Test("three sets of an @Observable property on two threads: the member ends at the last")
  func observableSetThriceOnTwoThreads() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: 50_000, varies: true) {
      let meter = HookedLevel()
      let held = LockedBox<UInt?>(nil)
      meter.hook.set { _ in
        if currentThreadNumber() == held.withLock({ $0 }) { explorer.point() }
      }
      let label = IntLabel(explorer)
      let chain = Bind.in(meter, \.shown).out(label, \.value)
      return (
        [
          {
            held.withLock { $0 = currentThreadNumber() }
            meter.level = 1
          },
          {
            meter.level = 2
            meter.level = 3
          },
        ],
        {
          withExtendedLifetime(chain) {}
          guard label.value == meter.level else {
            return "label \(label.value), level \(meter.level)"
          }
          #if os(Linux)
            // A watch is still armed: a later set reaches the label (at once, on Linux).
            meter.level = 7
            if label.value != 7 { return "after a later set, label \(label.value)" }
          #endif
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }
}

extension InterleavingTests {
  // A member that reads a `@Bound` property and an `@Observable` one counts the `@Observable`
  // changes its watch sees coming (will-set), so that a read made between the count and the
  // store reads again. ChainBind's points before and after the count let a read begin there.
  // A set may fire two watches, in Observation's order (`varies`, as above).
  @Test(
    "a member reading a @Bound and an @Observable property, each set on its own thread",
    arguments: [true, false])
  func mixedMemberInputsSetOnTwoThreads(readsBoundFirst: Bool) {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit, varies: true) {
      let mixed = MixedSum(explorer, readsBoundFirst: readsBoundFirst)
      let label = Label(explorer)
      let chain = Bind.in(mixed, \.sum).out(label, \.value)
      return (
        [{ mixed.a = 1 }, { mixed.meter.level = 10 }],
        {
          withExtendedLifetime(chain) {}
          guard label.value == 11 else { return "label \(label.value), sum 11" }
          // Both inputs are still observed (a later `@Observable` set delivered at once, on Linux).
          mixed.a = 2
          guard label.value == 12 else { return "after a later a, label \(label.value)" }
          #if os(Linux)
            mixed.meter.level = 20
            guard label.value == 22 else { return "after a later level, label \(label.value)" }
          #endif
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }
}

extension InterleavingTests {
  // A getter that branches tracks the branch its last read took: one thread flips the branch
  // (a `@Bound` flag, or an `@Observable` one, whose set may fire two watches: `varies`).
  @Test(
    "a computed member's branch flipped while another thread sets both branches' inputs",
    arguments: [false, true])
  func branchFlippedWhileInputsAreSet(observableFlag: Bool) {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.limit, varies: observableFlag) {
      let branch = Branch(explorer, observableFlag: observableFlag)
      let label = Label(explorer)
      let chain = Bind.in(branch, \.value).out(label, \.value)
      return (
        [
          { branch.flip() },
          {
            branch.a = 3
            branch.b = 5
          },
        ],
        {
          withExtendedLifetime(chain) {}
          guard label.value == 5 else { return "label \(label.value), value 5" }
          // The branch taken is observed; the other is not: a set of `a` reads nothing.
          branch.b = 6
          guard label.value == 6 else { return "after a later b, label \(label.value)" }
          let reads = branch.reads.withLock { $0 }
          branch.a = 4
          let readsAfter = branch.reads.withLock { $0 }
          guard readsAfter == reads else { return "a later a read the getter again" }
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }
}

extension InterleavingTests {
  // A member that is an `@Observable` class's own property keeps the watch that fired armed, and
  // re-reads without arming another: from its first change on (made before the threads start,
  // or by them), every set on either thread still reaches the label.
  @Test(
    "a flat @Observable property set on two threads: the member ends at the last",
    arguments: [true, false])
  func flatObservableSetOnTwoThreads(changedFirst: Bool) {
    let explorer = Explorer()
    // About 9 400 schedules when the member is flat before the threads start, 4 800 otherwise.
    let outcome = explorer.explore(limit: 20_000) {
      let meter = Meter()
      let label = IntLabel(explorer)
      let chain = Bind.in(meter, \.level).out(label, \.value)
      if changedFirst { meter.level = 1 }
      return (
        [
          { meter.level = 2 },
          {
            meter.level = 3
            meter.level = 4
          },
        ],
        {
          withExtendedLifetime(chain) {}
          guard label.value == meter.level else {
            return "label \(label.value), level \(meter.level)"
          }
          #if os(Linux)
            // The watch is still armed: later sets reach the label at once.
            for next in 7...9 {
              meter.level = next
              if label.value != next { return "after a later set \(next), label \(label.value)" }
            }
          #endif
          return nil
        }
      )
    }
    expectExhaustive(explorer, outcome)
  }
}
