@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Observation
import Testing

/// Holds the thread that calls `pauseIfArmed()` first (after `skipping` others) until the test
/// resumes it.
private final class Pause: @unchecked Sendable {
  // The calls to let pass before the one held; nil when not armed.
  private let passing = LockedBox<Int?>(nil)
  let reached = DispatchSemaphore(value: 0)
  let resume = DispatchSemaphore(value: 0)
  func arm(skipping: Int = 0) { passing.withLock { $0 = skipping } }
  func pauseIfArmed() {
    let go = passing.withLock { passing in
      guard let count = passing else { return false }
      passing = count == 0 ? nil : count - 1
      return count == 0
    }
    if go {
      reached.signal()
      resume.wait()
    }
  }
}

private class Base: @unchecked Sendable {
  @Bound var p = 0
}

/// Its getter runs user code after the @Bound getter installed the token.
private final class Sub: Base, @unchecked Sendable {
  let pause = Pause()
  override var p: Int {
    get {
      let value = super.p
      pause.pauseIfArmed()
      return value
    }
    set { super.p = newValue }
  }
}

private final class Holder: @unchecked Sendable {
  @Bound var target: Base = Base()
}

private final class Source: @unchecked Sendable {
  @Bound var x = 0
}

@Observable
private final class Volume: @unchecked Sendable {
  var level = 0
  var addsGain = true
}

/// `gain + level`; with `addsGain` false, `level` alone (it reads no `@Bound` property).
private final class Mixer: @unchecked Sendable {
  @Bound var gain = 0
  let volume = Volume()
  let pause = Pause()
  let reads = LockedBox(0)
  var total: Int {
    reads.withLock { $0 += 1 }
    let level = volume.level
    guard volume.addsGain else { return level }
    pause.pauseIfArmed()
    return gain + level
  }
}

/// `level`, read by a getter that reads no `@Bound` property.
@Observable
private final class Meter: @unchecked Sendable {
  var level = 0
  @ObservationIgnored let pause = Pause()
  @ObservationIgnored let reads = LockedBox(0)
  var shown: Int {
    reads.withLock { $0 += 1 }
    let level = level
    pause.pauseIfArmed()
    return level
  }
}

@Observable
private final class Choice: @unchecked Sendable {
  var useBound = true
  var level = 0
}

/// `x` while `settings.useBound`, else `settings.level`.
private final class Selector: @unchecked Sendable {
  @Bound var x = 0
  let settings = Choice()
  let pause = Pause()
  var value: Int {
    guard !settings.useBound else { return x }
    let level = settings.level
    pause.pauseIfArmed()
    return level
  }
}

/// `volume.level` once `on`; 0 before (it reads no `@Observable` property then).
private final class Starter: @unchecked Sendable {
  @Bound var on = false
  let volume = Volume()
  let pause = Pause()
  var value: Int {
    guard on else { return 0 }
    let level = volume.level
    pause.pauseIfArmed()
    return level
  }
}

private final class Cell: @unchecked Sendable {
  @Bound var p = 0
  // Bigger than a token: not in the token's malloc size class.
  var padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
}

private final class Owner: @unchecked Sendable {
  @Bound var generation = 0
  var cell = Cell()  // a plain link: replacing it is no change, `generation` tells
  var pending: Cell?  // the link's next value, taken by the next read
  let pause = Pause()
  var value: Int {
    _ = generation
    if let next = pending {
      pending = nil
      cell = next  // the old cell, and its token, die here
    }
    let value = cell.p
    pause.pauseIfArmed()
    return value
  }
}

// Races at a tracked member's read, each held at its race point: another chain's binding undone,
// an `@Observable` change, a token that dies and one that takes its address. In each, before
// 0.4's fixes, the member stopped following a property its last read read, and missed its
// changes.
@Suite struct TrackedRaceTests {
  // A binding refused after its probe installed a token (the chain was unbound meanwhile) puts
  // back no token where another chain's tracked member, re-read meanwhile, observes it.
  @Test func aRefusedBindingKeepsATokenAnotherChainObserves() {
    let holder = Holder()
    let seen = LockedBox<[Int]>([])
    let tracked = Bind.in(holder, \Holder.target.p).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    let source = Source()
    let errors = LockedBox<[BindingError.Cause]>([])
    let other = Bind.in(source, \.x).onError { error in errors.withLock { $0.append(error.cause) } }
    let object = Sub()
    object.p = 7
    object.pause.arm()
    // Thread A adds object.p to `other`; its probe installs a token and A is held in the getter.
    let adding = startThread { other.in(object as Base, \.p) }
    #expect(object.pause.reached.wait(timeout: .now() + 30) == .success)
    // Meanwhile: `tracked` re-reads and reaches object.p, observing the probe's token.
    holder.target = object
    #expect(seen.withLock { $0 } == [0, 7])
    // ... and `other` is released, so that A's attach is refused and its install undone.
    other.unbind()
    object.pause.resume.signal()
    #expect(adding.wait(timeout: .now() + 30) == .success)
    #expect(errors.withLock { $0 } == [.chainInactive])
    object.p = 42
    #expect(seen.withLock { $0.last } == 42)
    tracked.unbind()
  }

  // An `@Observable` dependency changed while a re-read (a `@Bound` dependency's) runs, after
  // the read accessed it: the re-read's watch is not armed yet, and the one before it fires.
  // `Armed.first`: the watch the member's first read armed; `.reread`: one a re-read armed;
  // `.branch`: one a read armed that first touched a `@Bound` property (the read before it
  // touched none).
  enum Armed: CaseIterable { case first, reread, branch }

  @Test(arguments: Armed.allCases)
  func anObservableChangeDuringAReReadIsNotLost(armed: Armed) {
    let mixer = Mixer()
    mixer.volume.addsGain = armed != .branch
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(mixer, \.total).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    switch armed {
    case .first: break
    case .reread:
      mixer.volume.level = 1
      #expect(seen.withLock { $0 } == [0, 1])
    case .branch:
      mixer.volume.addsGain = true
      // The read touched `gain` with a watch that counts nothing: the one that reads again to
      // arm one that counts (queued, in a relay) has run.
      #expect(waitUntilIdle(chain))
    }
    mixer.pause.arm()
    // Thread A changes the @Bound dependency: its re-read reads level and is held.
    let changing = startThread { mixer.gain = 10 }
    #expect(mixer.pause.reached.wait(timeout: .now() + 30) == .success)
    // The @Observable dependency changes after A's read accessed it.
    mixer.volume.level = 5
    mixer.pause.resume.signal()
    #expect(changing.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(mixer.total == 15)
    #expect(seen.withLock { $0.last } == 15)
    mixer.volume.level = 6  // followed afterwards
    #expect(seen.withLock { $0.last } == 16)
    chain.unbind()
  }

  // The re-read queued by a read that first touched a `@Bound` property, whose watch counts
  // nothing, held after it read the `@Observable` dependency, which then changes: that watch,
  // an older read's, fires, and its change is read again.
  @Test func anObservableChangeDuringTheReReadAfterABranchIsNotLost() {
    let mixer = Mixer()
    mixer.volume.addsGain = false
    mixer.gain = 10  // not read yet
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(mixer, \.total).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    mixer.pause.arm(skipping: 1)
    // Thread A takes the branch: its read reads `gain` and queues the re-read, which is held.
    let branching = startThread { mixer.volume.addsGain = true }
    #expect(mixer.pause.reached.wait(timeout: .now() + 30) == .success)
    mixer.volume.level = 5
    mixer.pause.resume.signal()
    #expect(branching.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(seen.withLock { $0 } == [0, 10, 15])
    mixer.volume.level = 6  // followed afterwards
    #expect(seen.withLock { $0.last } == 16)
    chain.unbind()
  }

  // An `@Observable` dependency changed again while the re-read its watch started runs, after
  // the read accessed it, before the read arms its own watch: the watch that fired stays armed
  // until then, and fires again. `mixed`: a member that reads a `@Bound` property too, whose
  // watches count the changes they see coming. `again`: the re-read that second firing queued
  // is held too, and the property changes a third time during it.
  @Test(arguments: [false, true], [false, true])
  func anObservableChangeDuringTheReReadItsWatchStartedIsNotLost(mixed: Bool, again: Bool) {
    let meter = Meter()
    let mixer = Mixer()
    let seen = LockedBox<[Int]>([])
    let collect = { @Sendable (value: Int) in seen.withLock { $0.append(value) } }
    let chain =
      mixed
      ? Bind.in(mixer, \.total).out(key: "seen", collect)
      : Bind.in(meter, \.shown).out(key: "seen", collect)
    let set = { @Sendable (level: Int) in
      if mixed { mixer.volume.level = level } else { meter.level = level }
    }
    let pause = mixed ? mixer.pause : meter.pause
    pause.arm()
    // Thread A's change fires the watch; the re-read it starts reads `level` and is held.
    let changing = startThread { set(1) }
    #expect(pause.reached.wait(timeout: .now() + 30) == .success)
    set(2)  // queues a re-read behind A's
    if again { pause.arm() }
    pause.resume.signal()
    if again {
      #expect(pause.reached.wait(timeout: .now() + 30) == .success)
      set(3)
      pause.resume.signal()
    }
    #expect(changing.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    let last = again ? 3 : 2
    #expect(seen.withLock { $0 } == Array(0...last))
    set(last + 1)  // followed afterwards, once
    #expect(seen.withLock { $0 } == Array(0...last + 1))
    // The watches the races left armed do not multiply the reads.
    let reads = mixed ? mixer.reads : meter.reads
    let before = reads.withLock { $0 }
    set(last + 2)
    #expect(reads.withLock { $0 } - before == 1)
    #expect(seen.withLock { $0.last } == last + 2)
    chain.unbind()
  }

  // The same, when the watch that fired counts the changes it sees coming (its read followed one
  // that touched a `@Bound` property) and the re-read it starts counts none (the read before it
  // touched none): the watch's next firing re-reads, though it counts.
  @Test func aChangeDuringAReReadThatCountsNoneIsNotLost() {
    let selector = Selector()
    expectChangeKept(
      during: selector.pause, of: selector, \.value,
      prepare: { selector.settings.useBound = false },  // its watch counts; touches no `@Bound`
      heldSet: { selector.settings.level = 1 }, set: { selector.settings.level = $0 })
  }

  // A member's first read of an `@Observable` property (a `@Bound` change took it there) looks
  // for one, then reads again under a watch: a change made during that second read, after it
  // accessed the property, is seen by the look's one-time watch, and read again.
  @Test func anObservableChangeDuringTheFirstWatchedReadIsNotLost() {
    let starter = Starter()
    expectChangeKept(
      during: starter.pause, skipping: 1, of: starter, \.value,  // the look passes
      prepare: { starter.volume.level = 1 },  // not read yet
      heldSet: { starter.on = true }, set: { starter.volume.level = $0 })
  }

  // Binds `object`'s `value` (0 so far) after `prepare`; `heldSet` runs on another thread, whose
  // read `pause` holds in the getter while this thread sets 2. The member must send 1 and 2, in
  // order, and follow the next set.
  private func expectChangeKept<Object: AnyObject>(
    during pause: Pause, skipping: Int = 0, of object: Object, _ value: KeyPath<Object, Int>,
    prepare: () -> Void, heldSet: @escaping @Sendable () -> Void, set: (Int) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(object, value).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    prepare()
    #expect(waitUntilIdle(chain), sourceLocation: sourceLocation)
    pause.arm(skipping: skipping)
    let setting = startThread(heldSet)
    #expect(pause.reached.wait(timeout: .now() + 30) == .success, sourceLocation: sourceLocation)
    set(2)
    pause.resume.signal()
    #expect(setting.wait(timeout: .now() + 30) == .success, sourceLocation: sourceLocation)
    #expect(waitUntilIdle(chain), sourceLocation: sourceLocation)
    #expect(seen.withLock { $0 } == [0, 1, 2], sourceLocation: sourceLocation)
    set(3)
    #expect(seen.withLock { $0.last } == 3, sourceLocation: sourceLocation)
    chain.unbind()
  }

  // A token the member observed dies during its re-read, and the new link's property gets a
  // token there (at the dead one's address in most runs, as the allocator reuses it at once).
  // The read observes it as it reaches it, whatever its address says.
  @Test func aNewTokenAtADeadTokensAddressIsObservedDuringTheRead() {
    let owner = Owner()
    let seen = LockedBox<[Int]>([])
    let chain = Bind.in(owner, \.value).out(key: "seen") { value in
      seen.withLock { $0.append(value) }
    }
    let next = Cell()
    owner.pause.arm()
    // Thread A replaces the link, then bumps `generation`: its re-read gives the new cell a
    // token, and A is held in the getter.
    let replacing = startThread {
      // This thread's first allocation sets up its malloc cache, where the dying token then goes.
      withExtendedLifetime(Source()) {}
      owner.pending = next
      owner.generation += 1
    }
    #expect(owner.pause.reached.wait(timeout: .now() + 30) == .success)
    next.p = 5  // after A's read read it
    owner.pause.resume.signal()
    #expect(replacing.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(seen.withLock { $0.last } == 5)
    next.p = 6
    #expect(seen.withLock { $0.last } == 6)
    chain.unbind()
  }
}

/// `a + c`, written by setting `a`; a hook runs inside the setter, after that set.
private final class Total: @unchecked Sendable {
  @Bound var a = 0
  @Bound var c = 0
  // Called once: the test removes it from inside.
  let hook = Hook<Void>()
  // Getter calls while `counting` is set.
  let counting = LockedBox(false)
  let counted = LockedBox(0)
  var total: Int {
    get {
      if counting.withLock({ $0 }) { counted.withLock { $0 += 1 } }
      return a + c
    }
    set {
      a = newValue - c
      hook(())
    }
  }
}

private final class Level: @unchecked Sendable {
  @Bound var x = 0.0
}

/// Its setter keeps the whole part of what it is given: a write of `1.5` reads back `1.0`.
private final class Rounding: @unchecked Sendable {
  @Bound var whole = 0
  @Bound var offset = 0
  var value: Double {
    get { Double(whole + offset) }
    set { whole = Int(newValue) - offset }
  }
}

@Suite("Tracked sources: the chain's write of a member written by another thread")
struct TrackedSyncRaceTests {
  // Thread B writes a new tracked member's first value while thread A delivers the chain, and A,
  // inside its delivery, after the member's first read, sets what the member reads. That
  // notification is not B's write's echo: B reads nothing back outside the delivery (one
  // delivery at a time), and nothing is held.
  @Test func aSyncWrittenByTheAddingThreadIsNotHeldByTheDeliveringOne() {
    let source = Source()
    let total = Total()
    let aEntered = DispatchSemaphore(value: 0)
    let aRelease = DispatchSemaphore(value: 0)
    let aSetC = DispatchSemaphore(value: 0)
    let aRelease2 = DispatchSemaphore(value: 0)
    let chain = Bind.inout(source, \.x).out(key: "hold") { value in
      if value == 1 {
        aEntered.signal()
        _ = aRelease.wait(timeout: .now() + 30)
      } else if value == 2 {
        total.c = 5  // inside A's delivery, after the member's first read, while B writes it
        aSetC.signal()
        _ = aRelease2.wait(timeout: .now() + 30)
      }
    }
    let delivering = startThread { source.x = 1 }
    #expect(aEntered.wait(timeout: .now() + 30) == .success)
    let bInSetter = DispatchSemaphore(value: 0)
    let bContinue = DispatchSemaphore(value: 0)
    total.hook.set { [hook = total.hook] _ in
      hook.set(nil)
      bInSetter.signal()
      _ = bContinue.wait(timeout: .now() + 30)
    }
    let adding = startThread { chain.inout(total, \.total) }
    #expect(bInSetter.wait(timeout: .now() + 30) == .success)
    // Queued behind the member's first read, which A runs before it.
    #expect(startThread { source.x = 2 }.wait(timeout: .now() + 30) == .success)
    aRelease.signal()
    #expect(aSetC.wait(timeout: .now() + 30) == .success)
    // A still delivers: no read of the member may run anywhere else now.
    total.counting.withLock { $0 = true }
    bContinue.signal()
    #expect(adding.wait(timeout: .now() + 30) == .success)
    total.counting.withLock { $0 = false }
    #expect(total.counted.withLock { $0 } == 0)
    aRelease2.signal()
    #expect(delivering.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    // `c`, set by A's sink after the member was added, is the member's change: the chain takes
    // `1 + 5`, what B wrote and A set (before, the sync's end wrote `2` over it).
    #expect(total.total == 6)
    #expect(source.x == 6)
    // Nothing was left held: a change made inside a delivery still reaches the chain.
    let inside = Bind.inout(source, \.x).out(key: "set c") { value in
      if value == 3 { total.c = 7 }
    }
    source.x = 3
    #expect(waitUntilIdle(chain))
    #expect(total.total == source.x)
    inside.unbind()
    chain.unbind()
  }

  enum Changer: String, CaseIterable, CustomTestStringConvertible {
    case addingThread, anotherThread, deliveringThread
    var testDescription: String { rawValue }
  }

  // A tracked member added while another thread delivers: the adding thread writes its first
  // value, the delivery finishes the sync in its order. A change of what the member reads, made
  // after it was added and before that, is the member's newest value: the chain takes it.
  @Test(arguments: Changer.allCases)
  func aChangeMadeBeforeTheSyncFinishesIsDelivered(_ changer: Changer) {
    let source = Source()
    let total = Total()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let chain = Bind.inout(source, \.x).out(key: "hold") { value in
      guard value == 1 else { return }
      entered.signal()
      _ = release.wait(timeout: .now() + 30)
      if changer == .deliveringThread { total.c = 50 }
    }
    let delivering = startThread { source.x = 1 }
    #expect(entered.wait(timeout: .now() + 30) == .success)
    chain.inout(total, \.total)
    #expect(total.total == 1)
    switch changer {
    case .addingThread: total.c = 50
    case .anotherThread:
      #expect(startThread { total.c = 50 }.wait(timeout: .now() + 30) == .success)
    case .deliveringThread: break
    }
    release.signal()
    #expect(delivering.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(total.total == 51)
    #expect(source.x == 51)
    chain.unbind()
  }

  // A change another thread made before the member was added, delivered before its sync ends, is
  // the chain's newest value: the member gets it, though what it reads is not the value first
  // written (its setter drops the fraction), and nothing set it since.
  @Test func aChangeQueuedBeforeTheAddWinsOverTheFirstWrite() {
    let level = Level()
    let rounding = Rounding()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let chain = Bind.inout(level, \.x).out(key: "hold") { value in
      guard value == 1.5 else { return }
      entered.signal()
      _ = release.wait(timeout: .now() + 30)
    }
    let delivering = startThread { level.x = 1.5 }
    #expect(entered.wait(timeout: .now() + 30) == .success)
    #expect(startThread { level.x = 7 }.wait(timeout: .now() + 30) == .success)
    chain.inout(rounding, \.value)
    #expect(rounding.value == 1)
    release.signal()
    #expect(delivering.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(level.x == 7)
    #expect(rounding.value == 7)
    chain.unbind()
  }
}

/// A text control whose setter holds the writing thread (`hold`), behind a lock of its own.
private final class HeldField: ControlEventSource, @unchecked Sendable {
  enum Event: Hashable { case changed }
  let controlEvents = ControlEvents<Event>()
  private let stored = LockedBox("")
  let hold = Hook<String>()
  var text: String {
    get { stored.withLock { $0 } }
    set {
      stored.withLock { $0 = newValue }
      hold(newValue)
    }
  }
  // The user edits it: stores, then sends its event, as a control does.
  func userTypes(_ text: String) {
    stored.withLock { $0 = text }
    controlEvents.send(.changed)
  }
}

@Suite("Controls: another thread's edit while the chain writes the control")
struct ControlWriteRaceTests {
  // Thread A's delivery writes the field and is held in its setter; thread B edits the field
  // meanwhile. B's event is no echo of A's write: it is a change, and everything ends at it.
  @Test func anEditOnAnotherThreadDuringTheChainsWriteIsAChange() {
    let model = Source()
    let field = HeldField()
    let chain = Bind.inout(model, \.x).inout(field, \.text, on: .changed)
    let inWrite = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    field.hold.set { text in
      guard text == "1" else { return }
      inWrite.signal()
      _ = resume.wait(timeout: .now() + 30)
    }
    let writing = startThread { model.x = 1 }
    #expect(inWrite.wait(timeout: .now() + 30) == .success)
    let editing = startThread { field.userTypes("77") }
    #expect(editing.wait(timeout: .now() + 30) == .success)
    resume.signal()
    #expect(writing.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(model.x == 77)
    #expect(field.text == "77")
    chain.unbind()
  }
}

@Observable
private final class Gauge: @unchecked Sendable {
  var value = 0
}

enum ObservableBinding: CaseIterable { case newChain, join }

// In the schedule points' suite: one scheduler is installed at a time, by that suite's tests.
extension InterleavingTests {

  // Another thread sets the property once the binding's read has armed Observation's watch, and
  // before the binding asks whether it did: the set fires the watch, which Observation lets go.
  // The property is observable all the same: no `.notObservable`, and the chain gets the set.
  @Test(
    "an @Observable property set right after a binding's read: no error, and the chain gets it",
    arguments: ObservableBinding.allCases)
  func aSetRightAfterTheReadIsNoError(_ binding: ObservableBinding) {
    let gauge = Gauge()
    let label = Plain()
    let log = ErrorLog()
    let existing: Chain<Int>? =
      binding == .join ? Bind.inout(gauge, \.value).onError(log.handler).out(label, \.int) : nil
    let binder = currentThreadNumber()
    // In a box emptied once used: the scheduler is kept for good, and the gauge must not be.
    let setting = LockedBox<Gauge?>(gauge)
    let chain = Bind.withSchedulePoints({
      guard currentThreadNumber() == binder,
        let target = setting.withLock({ box in
          defer { box = nil }; return box
        })
      else { return }
      startThread { target.value = 1 }.wait()
    }) {
      existing?.in(gauge, \.value)
        ?? Bind.in(gauge, \.value).onError(log.handler).out(label, \.int)
    }
    #expect(setting.withLock { $0 } == nil)
    #expect(waitUntilIdle(chain))
    #expect(log.errors.map(\.description) == [])
    #expect(label.int == 1)
    gauge.value = 2
    #expect(label.int == 2)
    chain.unbind()
  }
}

@Observable
private final class Tally: @unchecked Sendable {
  var value = 0
}

private final class Shown: @unchecked Sendable {
  var value = -1
}

extension TrackedRaceTests {
  // Randomized, at the scale an outside client's test found a lost change: one thread sets a
  // flat `@Observable` property 1…2 000 while another adds and removes keyed sinks, so that the
  // sets' re-reads often wait for the other thread's delivery (InterleavingTests holds the
  // race this found). Every round ends with every member at the last value.
  //
  // Not under ThreadSanitizer (.ci/run sets CHAINBIND_TSAN): the delivering thread reads the
  // model's property while the setting thread sets it, a race on the model by construction.
  @Test(.disabled(if: ProcessInfo.processInfo.environment["CHAINBIND_TSAN"] != nil))
  func anObservableSourceSetWhileAnotherThreadChangesTheChainEndsAtItsLastValue() {
    for round in 0..<20 {
      let tally = Tally()
      let shown = Shown()
      let chain = Bind.inout(tally, \.value).out(shown, \.value)
      let start = DispatchSemaphore(value: 0)
      let setter = startThread {
        start.wait()
        for value in 1...2_000 { tally.value = value }
      }
      let toucher = startThread {
        start.wait()
        for step in 0..<400 {
          chain.out(key: "k\(step % 4)") { _ in }
          chain.removeOut(key: "k\((step + 2) % 4)")
        }
      }
      start.signal()
      start.signal()
      #expect(setter.wait(timeout: .now() + 60) == .success)
      #expect(toucher.wait(timeout: .now() + 60) == .success)
      #expect(waitUntilIdle(chain))
      #expect(chain.currentValue == 2_000, "round \(round)")
      #expect(shown.value == 2_000, "round \(round)")
      chain.unbind()
    }
  }
}

/// `source.x`, doubled, read through a getter that `pause` may hold.
private final class Doubler: @unchecked Sendable {
  let source: Source
  let pause = Pause()
  let reads = LockedBox(0)
  init(_ source: Source) { self.source = source }
  var doubled: Int {
    let value = source.x
    reads.withLock { $0 += 1 }
    pause.pauseIfArmed()
    return value * 2
  }
}

extension TrackedRaceTests {
  // A set tells the property's observers one by one, from a copy taken under the token's lock.
  // While the first one's re-read is held in its getter, another thread stops a second member
  // observing the property and starts a third: the list goes from two observers to one and
  // back to two. The member that stopped reads nothing more; the others end at the latest value.
  @Test func observersChangeWhileASetTellsThem() {
    let source = Source()
    let first = Doubler(source)
    let second = Doubler(source)
    let third = Doubler(source)
    let seenFirst = LockedBox<[Int]>([])
    let seenSecond = LockedBox<[Int]>([])
    let seenThird = LockedBox<[Int]>([])
    let chainFirst = Bind.in(first, \.doubled).out(key: "seen") { v in
      seenFirst.withLock { $0.append(v) }
    }
    let chainSecond = Bind.in(second, \.doubled).out(key: "seen") { v in
      seenSecond.withLock { $0.append(v) }
    }
    source.x = 1
    first.pause.arm()
    let setting = startThread { source.x = 5 }
    #expect(first.pause.reached.wait(timeout: .now() + 30) == .success)
    chainSecond.unbind()
    let secondReads = second.reads.withLock { $0 }
    let chainThird = Bind.in(third, \.doubled).out(key: "seen") { v in
      seenThird.withLock { $0.append(v) }
    }
    first.pause.resume.signal()
    #expect(setting.wait(timeout: .now() + 30) == .success)
    source.x = 6
    #expect(seenFirst.withLock { $0 } == [0, 2, 10, 12])
    #expect(seenSecond.withLock { $0 } == [0, 2])
    #expect(second.reads.withLock { $0 } == secondReads)
    #expect(seenThird.withLock { $0 } == [10, 12])
    chainFirst.unbind()
    chainThird.unbind()
    let reads = (first.reads.withLock { $0 }, third.reads.withLock { $0 })
    source.x = 7
    #expect(first.reads.withLock { $0 } == reads.0)
    #expect(third.reads.withLock { $0 } == reads.1)
  }
}
