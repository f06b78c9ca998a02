@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Observation
import Synchronization
import Testing

// Docs/Semantics.md, "Isolation": a chain to which something was added from an actor's
// isolation delivers every change on that actor.

/// Whether this code runs on the main actor: on the main queue, which runs the main actor's jobs.
///
/// Not `Thread.isMainThread`: on Linux, once a program (a test runner) calls `dispatchMain()`,
/// the main queue, and so the main actor, runs on other threads.
let mainQueueMark: DispatchSpecificKey<Int> = {
  let key = DispatchSpecificKey<Int>()
  DispatchQueue.main.setSpecific(key: key, value: 42)
  return key
}()

func isOnMainActor() -> Bool {
  DispatchQueue.getSpecific(key: mainQueueMark) == 42
}

/// A model changed from any thread, as a download or a network callback would.
private final class Download: @unchecked Sendable {
  @Bound var progress = 0.0
  @Bound var title = ""
  @Bound var threads: [Bool] = []
}

/// A main-actor view: every write records whether it ran on the main actor.
@MainActor
private final class ProgressLabel {
  var text = "" {
    didSet { writes.append(isOnMainActor()) }
  }
  var writes: [Bool] = []
}

/// Values a sink received, with the thread each came on, handed to the awaiting test.
private final class Deliveries<Value: Sendable>: Sendable {
  private let state = LockedBox<(values: [Value], onMain: [Bool])>(([], []))
  let stream: AsyncStream<Value>
  private let continuation: AsyncStream<Value>.Continuation

  init() {
    (stream, continuation) = AsyncStream.makeStream(of: Value.self)
  }

  func record(_ value: Value) {
    state.withLock {
      $0.values.append(value)
      $0.onMain.append(isOnMainActor())
    }
    continuation.yield(value)
  }

  var values: [Value] { state.withLock { $0.values } }
  var onMain: [Bool] { state.withLock { $0.onMain } }

  /// Waits until a value satisfying `isLast` arrives.
  func wait(until isLast: @Sendable (Value) -> Bool) async {
    for await value in stream where isLast(value) { return }
  }
}

/// Runs `body` on a new thread and returns when it has finished: a change made "elsewhere".
private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    body()
    done.signal()
  }
  thread.start()
  done.wait()
}

/// A custom actor that builds and changes chains inside its own isolation.
private actor Worker {
  let download = Download()
  var received: [Double] = []

  func bind(_ label: Label, _ arrived: Deliveries<Double>) -> ChainCode {
    Bind.in(download, \.progress)
      .out(label, \.value)
      .out(key: "record") { value in
        self.assertIsolated()
        self.received.append(value)
        arrived.record(value)
      }
      .code
  }

  func set(_ value: Double) { download.progress = value }

  /// Starts (joins) a chain from `download.progress` and adds `label` to it, from this actor.
  func add(_ label: Label, to download: Download) {
    Bind.in(download, \.progress).out(label, \.value)
  }
}

/// A plain (nonisolated) target.
private final class Label: @unchecked Sendable {
  var value = 0.0
  var text = ""
}

private class SpeedBase: @unchecked Sendable {
  @Bound var speed = 1
}

@Observable
private final class SpeedCap: @unchecked Sendable {
  var value = 50
}

/// Overrides the inherited `@Bound` property with a getter that also reads an `@Observable` one.
private final class CappedSpeed: SpeedBase, @unchecked Sendable {
  let cap = SpeedCap()
  override var speed: Int {
    get { min(super.speed, cap.value) }
    set { super.speed = newValue }
  }
}

@Suite("Isolation: main-actor chains deliver on the main actor")
struct MainActorIsolationTests {
  @Test("a change from a background thread writes a main-actor property on the main thread")
  @MainActor
  func backgroundChangeIsWrittenOnMain() async {
    let download = Download()
    let label = ProgressLabel()
    let arrived = Deliveries<Double>()
    let chain = Bind.in(download, \.progress)
      .out(label, \.text)
      .out(key: "arrived") { arrived.record($0) }
    #expect(label.text == "0.0")  // initial sync, here and now
    onAnotherThread { download.progress = 0.5 }
    // Not yet: the change waits for the main actor, which this test holds.
    #expect(label.text == "0.0")
    await arrived.wait { $0 == 0.5 }
    #expect(label.text == "0.5")
    #expect(label.writes == [true, true])
    #expect(arrived.onMain == [true, true])
    chain.unbind()
  }

  // Docs/Semantics.md, "Re-entrancy": a queued change is delivered even if its member has left.
  // Queued for the main actor, which the test holds, it was dropped there when its member had
  // been unbound, deallocated, or replaced by a join meanwhile.
  @Test(
    "a change queued for the main actor is delivered after its member left",
    arguments: ["unbound", "deallocated", "joined again"])
  @MainActor
  func queuedChangeOfALeavingMemberIsDelivered(leaving: String) async {
    let head = Download()
    let arrived = Deliveries<Double>()
    var second: Download? = Download()
    let chain = Bind.in(head, \.progress).in(second!, \.progress)
      .out(key: "arrived") { arrived.record($0) }
    let box = LockedBox(second)
    second = nil
    onAnotherThread {
      guard let member = box.withLock({ $0 }) else { return }
      member.progress = 0.7
      switch leaving {
      case "unbound": Bind.unbind(member, \.progress)
      case "joined again": _ = Bind.in(member, \.progress)
      default: box.withLock { $0 = nil }  // `member`, the last reference, goes with this closure
      }
    }
    #expect(box.withLock { $0 == nil } == (leaving == "deallocated"))
    #expect(await waitUntilIdle(chain))
    #expect(arrived.values == [0.0, 0.7])
    #expect(chain.isActive)
    chain.unbind()
  }

  @Test("a tracked member's dependency set on another thread is re-read on the main actor")
  @MainActor
  func trackedReread() async {
    /// A computed property over a `@Bound` one, and a nested path, whose reads record where
    /// they ran.
    final class Job: @unchecked Sendable {
      @Bound var download = Download()
      let reads = LockedBox<[Bool]>([])
      var percent: Double {
        reads.withLock { $0.append(isOnMainActor()) }
        return download.progress * 100
      }
    }
    let job = Job()
    let label = ProgressLabel()
    let arrived = Deliveries<Double>()
    let nestedArrived = Deliveries<Double>()
    let chain = Bind.in(job, \.percent)
      .out(label, \.text)
      .out(key: "arrived") { arrived.record($0) }
    let nested = Bind.in(job, \.download.progress).out(key: "nested") { nestedArrived.record($0) }
    let readsWhenBound = job.reads.withLock { $0.count }
    onAnotherThread { job.download.progress = 0.5 }
    // Not yet: the re-read waits for the main actor, which this test holds.
    #expect(label.text == "0.0")
    await arrived.wait { $0 == 50 }
    await nestedArrived.wait { $0 == 0.5 }
    #expect(label.text == "50.0")
    #expect(label.writes == [true, true])
    let rereads = job.reads.withLock { Array($0.dropFirst(readsWhenBound)) }
    #expect(rereads == [true])
    #expect(arrived.onMain == [true, true])
    #expect(nestedArrived.onMain == [true, true])
    chain.unbind()
    nested.unbind()
  }

  // A change made on the actor is delivered after those queued for it before; a tracked
  // member's re-read made there too. Until 0.4's fix the re-read came first, and the chain
  // ended at the older value queued.
  @Test(arguments: [false, true])
  @MainActor
  func aChangeOnTheActorComesAfterThoseQueuedForIt(tracked: Bool) async {
    final class Gauge: @unchecked Sendable {
      @Bound var raw = 1
      @Bound var plain = 0
      var tenfold: Int { raw * 10 }
    }
    final class Feed: @unchecked Sendable {
      @Bound var x = 0
    }
    let feed = Feed()
    let gauge = Gauge()
    let log = LockedBox<[Int]>([])
    let chain = Bind.inout(feed, \.x)
    if tracked { chain.in(gauge, \.tenfold) } else { chain.in(gauge, \.plain) }
    chain.out(key: "log") { value in log.withLock { $0.append(value) } }
    log.withLock { $0 = [] }
    onAnotherThread { feed.x = 5 }  // queued for the main actor, which this test holds
    if tracked { gauge.raw = 7 } else { gauge.plain = 70 }
    #expect(await waitUntilIdle(chain))
    #expect(log.withLock { $0 } == [5, 70])
    #expect(chain.currentValue == 70)
    #expect(feed.x == 70)
    chain.unbind()
  }

  // The same for the leaf of an `inout` `@Bound` path set on the actor: what was queued is
  // delivered first without writing the member, whose change is newer, and then the member's
  // value, even when the set left it as it was (`.same`), or what was queued set it again
  // (`.setAgain`: a sink that sets it on the queued value). Before these fixes the drained change
  // wrote the member, and the leaf's value, sent after it, left the chain and the member apart.
  enum LeafSet: CaseIterable { case newer, same, setAgain }

  @Test(arguments: LeafSet.allCases)
  @MainActor
  func aPathsLeafSetOnTheActorComesAfterChangesQueuedForIt(_ set: LeafSet) async {
    final class Inner: @unchecked Sendable {
      @Bound var raw = 1
    }
    final class Gauge: @unchecked Sendable {
      @Bound var inner = Inner()
    }
    final class Feed: @unchecked Sendable {
      @Bound var x = 1
    }
    let feed = Feed()
    let gauge = Gauge()
    let chain = Bind.inout(feed, \.x).inout(gauge, \.inner.raw)
    let log = LockedBox<[Int]>([])
    chain.out(key: "log") { value in
      log.withLock { $0.append(value) }
      if set == .setAgain && value == 5 { gauge.inner.raw = 99 }
    }
    log.withLock { $0 = [] }
    onAnotherThread { feed.x = 5 }  // queued for the main actor, which this test holds
    gauge.inner.raw = set == .same ? 1 : 70
    let expected = [LeafSet.newer: 70, .same: 1, .setAgain: 99][set]
    #expect(await waitUntilIdle(chain))
    #expect(log.withLock { $0 } == [5, expected])  // each once
    #expect(chain.currentValue == expected)
    #expect(feed.x == expected)
    #expect(gauge.inner.raw == expected)
    chain.unbind()
  }

  // An inherited `@Bound` property bound through a subclass key path, set on the actor after a
  // change was queued for the actor: that change is delivered first, then the member's value,
  // here the chain's already, so not sent. Nothing of the set is left over: a later change of
  // the `@Observable` property its override reads sends only what differs (it sent the equal
  // value).
  @Test
  @MainActor
  func anInheritedPropertySetOnTheActorAfterChangesQueuedForItLeavesNothingOver() async {
    final class Feed: @unchecked Sendable {
      @Bound var x = 1
    }
    let feed = Feed()
    let capped = CappedSpeed()
    let chain = Bind.inout(feed, \.x).inout(capped, \CappedSpeed.speed)
    let log = LockedBox<[Int]>([])
    chain.out(key: "log") { value in log.withLock { $0.append(value) } }
    log.withLock { $0 = [] }
    onAnotherThread { feed.x = 5 }  // queued for the main actor, which this test holds
    capped.speed = 5
    #expect(await waitUntilIdle(chain))
    #expect(log.withLock { $0 } == [5])
    capped.cap.value = 40  // min(5, 40) is 5: no change
    #expect(await waitUntilIdle(chain))
    #expect(log.withLock { $0 } == [5])
    capped.speed = 5  // the property itself: a change, though equal
    #expect(await waitUntilIdle(chain))
    #expect(log.withLock { $0 } == [5, 5])
    chain.unbind()
  }

  // A tracked member added from nonisolated code while the chain's delivery was handed to its
  // actor (a sink added during the member's first read): the sync's write is read back in the
  // chain's order, before the sync ends, not after it on the actor, where it came back as a
  // change.
  @Test
  @MainActor
  func aTrackedMemberSyncedWhileTheActorHoldsTheDeliverySendsNoEcho() async {
    let download = Download()
    download.progress = 4
    let arrived = Deliveries<Double>()
    let chain = Bind.inout(download, \.progress).out(key: "arrived") { arrived.record($0) }
    let late = Deliveries<Double>()
    let percent = HookedPercent()
    percent.duringFirstRead = {
      // Its first call waits for the chain's delivery, which the read's end hands to the actor.
      startThread { addSink(to: chain, recording: late) }.wait()
    }
    onAnotherThread { addTracked(percent, to: chain) }
    #expect(await waitUntilIdle(chain))
    #expect(percent.raw == 4)
    #expect(arrived.values == [4])
    #expect(late.values == [4])
    download.progress = 5
    #expect(arrived.values == [4, 5])
    #expect(percent.raw == 5)
    chain.unbind()
  }

  @Test("a change made on the main thread is delivered at once")
  @MainActor
  func mainThreadChangeIsSynchronous() {
    let download = Download()
    let label = ProgressLabel()
    Bind.in(download, \.progress).out(label, \.text)
    download.progress = 0.25
    #expect(label.text == "0.25")
    #expect(label.writes == [true, true])
  }

  @Test("changes from another thread arrive in order, with the last value last")
  @MainActor
  func backgroundChangesKeepOrder() async {
    let download = Download()
    let label = ProgressLabel()
    let arrived = Deliveries<Double>()
    let chain = Bind.in(download, \.progress)
      .out(label, \.text)
      .out(key: "arrived") { arrived.record($0) }
    onAnotherThread {
      for step in 1...200 { download.progress = Double(step) }
    }
    await arrived.wait { $0 == 200 }
    // Changes that waited for the actor may coalesce: never an older after a newer
    // (Docs/Semantics.md, "Fair delivery").
    let values = arrived.values
    #expect(values.first == 0)
    #expect(values.last == 200)
    #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
    #expect(arrived.onMain.allSatisfy { $0 })
    #expect(label.text == "200.0")
    #expect(label.writes.allSatisfy { $0 })
    chain.unbind()
  }

  @Test("filters, conversions, sinks and reverts run on the main actor")
  @MainActor
  func userCodeRunsOnMain() async {
    let download = Download()
    let label = ProgressLabel()
    let filterThreads = Deliveries<Bool>()
    let convertThreads = Deliveries<Bool>()
    let arrived = Deliveries<Double>()
    let chain = Bind.inout(download, \.progress)
      .out(
        label, \.text,
        convert: { value in
          convertThreads.record(isOnMainActor())
          return "\(Int(value * 100)) %"
        }
      )
      .filter { value in
        filterThreads.record(isOnMainActor())
        return value <= 1
      }
      .out(key: "arrived") { arrived.record($0) }
    // Rejected: reverted, on the main actor, to the last accepted value.
    onAnotherThread { download.progress = 7 }
    // Delivered before the next change: otherwise the newer one would replace it while waiting.
    #expect(await waitUntilIdle(chain))
    // Accepted.
    onAnotherThread { download.progress = 0.5 }
    await arrived.wait { $0 == 0.5 }
    #expect(download.progress == 0.5)
    #expect(label.text == "50 %")
    #expect(arrived.values == [0, 0.5])
    #expect(filterThreads.values == [true, true])
    #expect(convertThreads.values == [true, true])
    #expect(arrived.onMain == [true, true])
    chain.unbind()
  }

  @Test("a rejected change from another thread is reverted on the main actor")
  @MainActor
  func revertRunsOnMain() async {
    let download = Download()
    let arrived = Deliveries<[Bool]>()
    let chain = Bind.inout(download, \.title)
      .filter { $0.count <= 3 }
      .out(key: "arrived") { _ in arrived.record([]) }
    let reverted = Deliveries<Bool>()
    let watcher = Bind.in(download, \.title).out(key: "revert") { title in
      if title == "" { reverted.record(isOnMainActor()) }
    }
    onAnotherThread { download.title = "long" }
    await reverted.wait { _ in true }
    #expect(download.title == "")
    #expect(reverted.values == [true])
    chain.unbind()
    watcher.unbind()
  }

  @Test("a change on the main thread first delivers the changes queued before it")
  @MainActor
  func queuedChangesComeFirst() async {
    let download = Download()
    let other = Download()
    let label = ProgressLabel()
    let arrived = Deliveries<Double>()
    let chain = Bind.inout(download, \.progress)
      .inout(other, \.progress)
      .out(label, \.text)
      .out(key: "arrived") { arrived.record($0) }
    onAnotherThread { download.progress = 1 }
    // The main thread changes another member before the queued change was delivered: the
    // queued one goes first, and does not overwrite the newer value.
    other.progress = 2
    #expect(arrived.values == [0, 1, 2])
    #expect(download.progress == 2)
    #expect(other.progress == 2)
    #expect(label.text == "2.0")
    // The job scheduled for the queued change finds nothing left to deliver.
    await MainActor.run {}
    #expect(arrived.values == [0, 1, 2])
    chain.unbind()
  }

  @Test("a member added from nonisolated code joins a main-actor chain and is written on main")
  @MainActor
  func nonisolatedAdditionIsAllowed() async {
    let download = Download()
    let label = ProgressLabel()
    let plain = Label()
    let arrived = Deliveries<Double>()
    let chain = Bind.in(download, \.progress)
      .out(label, \.text)
      .out(key: "arrived") { arrived.record($0) }
    let errors = addFromNonisolatedCode(plain, to: chain)
    #expect(errors.isEmpty)
    #expect(chain.memberCount == 3)
    onAnotherThread { download.progress = 0.75 }
    await arrived.wait { $0 == 0.75 }
    #expect(plain.value == 0.75)
    #expect(label.writes == [true, true])
    chain.unbind()
  }

  @Test("a `@Bound` member added on another thread gets its first value as the chain's write")
  @MainActor
  func boundMemberAddedElsewhereIsSyncedWithoutAChange() {
    let download = Download()
    download.progress = 3
    let arrived = Deliveries<Double>()
    let chain = Bind.in(download, \.progress).out(key: "arrived") { arrived.record($0) }
    let other = Download()
    // Initial sync at once, on the adding thread: the chain's own write, not a change of
    // `other` to queue for the actor.
    onAnotherThread { addInout(other, to: chain) }
    #expect(other.progress == 3)
    // Delivered at once, after what was queued for the actor.
    download.progress = 4
    #expect(arrived.values == [3, 4])
    #expect(other.progress == 4)
    chain.unbind()
  }

  // The same for a tracked member: its first value's notification is the chain's own write,
  // read back on the adding thread, which delivers. Before 0.4's fix its re-read was queued for
  // the actor, which read the write back as a change and sent it to every sink again.
  @Test("a tracked member added from nonisolated code is synced without a change")
  @MainActor
  func trackedMemberAddedElsewhereIsSyncedWithoutAChange() async {
    let download = Download()
    download.progress = 3
    let arrived = Deliveries<Double>()
    let chain = Bind.in(download, \.progress).out(key: "arrived") { arrived.record($0) }
    let percent = Percent()
    onAnotherThread { addTracked(percent, to: chain) }
    #expect(percent.download.progress == 3)
    #expect(await waitUntilIdle(chain))
    #expect(arrived.values == [3])
    download.progress = 4
    #expect(arrived.values == [3, 4])
    #expect(percent.download.progress == 4)
    chain.unbind()
  }

  @Test("a `@Bound` member added on another thread while the actor delivers: no change either")
  @MainActor
  func boundMemberAddedWhileTheActorDeliversIsSyncedWithoutAChange() {
    let download = Download()
    download.progress = 3
    let arrived = Deliveries<Double>()
    let other = Download()
    let chain = Bind.in(download, \.progress)
    chain.out(key: "arrived") { value in
      arrived.record(value)
      // Added while the actor delivers 5: written at once on the adding thread, then again in
      // the delivery's order.
      if value == 5 { onAnotherThread { addInout(other, to: chain) } }
    }
    download.progress = 5
    #expect(other.progress == 5)
    download.progress = 6
    #expect(arrived.values == [3, 5, 6])
    #expect(other.progress == 6)
    chain.unbind()
  }

  @Test("adding from another actor is refused with an error that names both actors")
  @MainActor
  func otherActorIsRefused() async {
    let download = Download()
    let label = ProgressLabel()
    let errors = Deliveries<BindingError>()
    let chain = Bind.in(download, \.progress)
      .onError { errors.record($0) }
      .out(label, \.text)
    let plain = Label()
    plain.value = -1
    await Worker().add(plain, to: download)
    // Reported to the chain's handler, on the chain's actor: the join and the member.
    await errors.wait { $0.member == "Label.value" }
    let mismatch = BindingError.Cause.isolationMismatch(chain: "MainActor", caller: "Worker")
    #expect(errors.values.map(\.cause) == [mismatch, mismatch])
    #expect(errors.values.map(\.member) == ["Download.progress", "Label.value"])
    #expect(errors.values.allSatisfy { $0.chain == chain.code })
    #expect(errors.onMain == [true, true])
    #expect(
      errors.values.first?.description
        == "ChainBind: chain \(chain.code), member Download.progress: the chain is isolated to"
        + " MainActor and this was added from Worker; nothing was added")
    #expect(plain.value == -1)  // not added, not written
    #expect(chain.memberCount == 2)
    download.progress = 1
    #expect(plain.value == -1)
    chain.unbind()
  }

  @Test("a filter, sink or error handler added from another actor is refused too")
  @MainActor
  func otherActorSinkAndFilterAreRefused() async {
    let download = Download()
    let label = ProgressLabel()
    let errors = Deliveries<BindingError>()
    let chain = Bind.in(download, \.progress)
      .onError { errors.record($0) }
      .out(label, \.text)
    let calls = Deliveries<Double>()
    await Worker().extend(chain, calls: calls)
    await errors.wait { $0.member == "onError" }
    #expect(errors.values.map(\.member) == ["filter", "out(key: \"worker\")", "onError"])
    download.progress = 1
    #expect(calls.values.isEmpty)
    #expect(label.text == "1.0")
    chain.unbind()
  }
}

extension Worker {
  /// Tries to add a filter, a sink and an error handler to `chain` from this actor.
  func extend(_ chain: Chain<Double>, calls: Deliveries<Double>) {
    chain
      .filter { value in
        calls.record(value)
        return true
      }
      .out(key: "worker") { calls.record($0) }
      .onError { _ in calls.record(-1) }
  }
}

/// Adds `download`'s progress as an `inout` member, from code that is not isolated to any actor.
private nonisolated func addInout(_ download: Download, to chain: Chain<Double>) {
  chain.inout(download, \.progress)
}

/// A computed property over a nested `@Bound` one: a tracked member.
private final class Percent: @unchecked Sendable {
  @Bound var download = Download()
  var progress: Double {
    get { download.progress }
    set { download.progress = newValue }
  }
}

/// Adds `percent`'s progress as an `inout` member, from code that is not isolated to any actor.
private nonisolated func addTracked(_ percent: Percent, to chain: Chain<Double>) {
  chain.inout(percent, \.progress)
}

/// A computed property over a `@Bound` one that runs a hook inside its first read after
/// binding's.
private final class HookedPercent: @unchecked Sendable {
  @Bound var raw = 100.0
  var duringFirstRead: (@Sendable () -> Void)?
  private let reads = LockedBox(0)
  var progress: Double {
    get {
      if reads.withLock({
        $0 += 1; return $0
      }) == 2 {
        duringFirstRead?()
      }
      return raw
    }
    set { raw = newValue }
  }
}

private nonisolated func addTracked(_ percent: HookedPercent, to chain: Chain<Double>) {
  chain.inout(percent, \.progress)
}

/// Adds a sink from code that is not isolated to any actor.
private nonisolated func addSink(to chain: Chain<Double>, recording values: Deliveries<Double>) {
  chain.out(key: "late") { values.record($0) }
}

/// Adds `label` from code that is not isolated to any actor.
private nonisolated func addFromNonisolatedCode(_ label: Label, to chain: Chain<Double>)
  -> [BindingError]
{
  let errors = LockedBox<[BindingError]>([])
  chain.onError { error in errors.withLock { $0.append(error) } }
    .out(label, \.value)
  return errors.withLock { $0 }
}

@Suite("Isolation: nonisolated chains and other actors")
struct NonisolatedIsolationTests {
  @Test("a chain built from nonisolated code writes synchronously on the changing thread")
  func nonisolatedChainIsSynchronous() {
    let download = Download()
    let label = Label()
    let chain = Bind.in(download, \.progress).out(label, \.value)
    let seen = LockedBox<(value: Double, onMain: Bool)>((0, true))
    onAnotherThread {
      download.progress = 0.5
      seen.withLock { $0 = (label.value, isOnMainActor()) }
    }
    #expect(seen.withLock { $0.value } == 0.5)
    #expect(seen.withLock { $0.onMain } == false)
    chain.unbind()
  }

  @Test("a chain built inside an actor delivers changes from elsewhere on that actor, in order")
  func customActorDeliversOnIt() async {
    let worker = Worker()
    let label = Label()
    let arrived = Deliveries<Double>()
    let code = await worker.bind(label, arrived)
    let download = worker.download
    onAnotherThread {
      for step in 1...50 { download.progress = Double(step) }
    }
    // A change made inside the actor is queued behind them (Docs/Semantics.md, "Isolation").
    await worker.set(51)
    await arrived.wait { $0 == 51 }
    // In order; changes that waited for the actor may coalesce (Docs/Semantics.md, "Fair
    // delivery").
    let received = await worker.received
    #expect(received.first == 0)
    #expect(received.last == 51)
    #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
    #expect(label.value == 51)
    Bind.unbind(code)
  }
}

/// Builds a chain from nonisolated code whose filter, on the change to 1, tells `entered` and
/// waits for `proceed`: the delivering thread is held inside the chain.
private nonisolated func holdingChain(
  _ download: Download, entered: DispatchSemaphore, proceed: DispatchSemaphore,
  filtered: Deliveries<Double>
) -> Chain<Double> {
  Bind.in(download, \.progress).filter { value in
    filtered.record(value)
    if value == 1 {
      entered.signal()
      proceed.wait()
    }
    return true
  }
}

/// An actor that binds, and can be let go.
private actor Holder {
  func bind(_ download: Download, _ label: Label) -> Chain<Double> {
    Bind.in(download, \.progress).out(label, \.value)
  }

  func addSink(to chain: Chain<Double>, _ calls: Deliveries<Double>) {
    chain.out(key: "holder") { calls.record($0) }
  }

  func take(_ download: Download, _ label: Label) {
    Bind.in(download, \.title).out(label, \.text)
  }
}

@Suite("Isolation: a chain isolated while it delivers, and other edges", .serialized)
struct IsolationEdgeTests {
  @Test("a chain isolated while another thread delivers hands the delivery to the actor")
  @MainActor
  func isolatedDuringDelivery() async {
    let download = Download()
    let other = Download()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let filtered = Deliveries<Double>()
    let chain = holdingChain(download, entered: entered, proceed: proceed, filtered: filtered)
    let done = DispatchSemaphore(value: 0)
    Thread {
      download.progress = 1
      done.signal()
    }.start()
    entered.wait()  // the other thread is inside the filter, delivering 1
    let arrived = Deliveries<Double>()
    chain.in(other, \.progress).out(key: "ui") { arrived.record($0) }  // isolates the chain
    other.progress = 5  // on the main actor, while the other thread still delivers
    proceed.signal()
    done.wait()
    await arrived.wait { $0 == 5 }
    // Added while the other thread delivered: its first call comes in the delivery's order, on
    // the actor the delivery was handed to, with the value current then (1), then 5.
    #expect(arrived.values == [1, 5])
    #expect(arrived.onMain == [true, true])
    // The filter accepted 1 on the other thread, before the chain was isolated: not again.
    #expect(filtered.values == [1, 5])
    #expect(filtered.onMain == [false, true])
    chain.unbind()
  }

  @Test("a change on the actor made stale by the queued changes before it is dropped")
  @MainActor
  func staleChangeIsDropped() async {
    let left = Download()
    let right = Download()
    let chain = Bind.inout(left, \.progress).inout(right, \.progress)
      .out(key: "policy") { value in if value == 1 { right.progress = 50 } }
    onAnotherThread { left.progress = 1 }  // queued for the main actor
    // Made on the main actor: the queued 1 goes first, and its sink sets `right` to 50, a newer
    // change of `right` than this 2, which is then dropped.
    right.progress = 2
    #expect(left.progress == 50)
    #expect(right.progress == 50)
    await MainActor.run {}
    #expect(left.progress == right.progress)
    chain.unbind()
  }

  @Test("errors reported on the actor come after those queued for it earlier")
  @MainActor
  func errorsKeepOrder() async {
    final class Plain: @unchecked Sendable {
      var value = 0.0
      var computed: Double { value }
    }
    let download = Download()
    let first = Plain()
    let second = Plain()
    let errors = Deliveries<BindingError>()
    let chain = Bind.inout(download, \.progress).onError { errors.record($0) }
    onAnotherThread { chain.in(first, \.value) }  // nonisolated: its error waits for main
    chain.in(second, \.computed)  // on the main actor: after the queued one
    await errors.wait { _ in errors.values.count == 2 }
    #expect(errors.values.map(\.cause) == [.notObservable, .notObservable])
    #expect(errors.values.map(\.member) == ["Plain.value", "Plain.<computed Double>"])
    #expect(errors.onMain == [true, true])
    chain.unbind()
  }

  @Test("a chain whose actor is deallocated is released, and its property can be bound again")
  func deadActorReleasesChain() async {
    let download = Download()
    let label = Label()
    var holder: Holder? = Holder()
    weak let weakHolder = holder
    let chain = await holder?.bind(download, label)
    holder = nil
    // The runtime lets go of an actor shortly after its last job: wait for it, without timing.
    while weakHolder != nil { await Task.yield() }
    download.progress = 4  // not on the (gone) actor: nothing left to deliver to
    #expect(chain?.isActive == false)
    #expect(label.value == 0)
    let again = Bind.in(download, \.progress).out(label, \.value)
    #expect(again.isActive)
    #expect(label.value == 4)
    again.unbind()
  }

  @Test("another actor cannot add to the chain of a deallocated actor")
  func deadActorsChainRefusesOthers() async {
    let download = Download()
    var first: Holder? = Holder()
    weak let weakFirst = first
    let chain = Bind.in(download, \.progress)
    let errors = LockedBox<[BindingError]>([])
    chain.onError { error in errors.withLock { $0.append(error) } }
    let firstCalls = Deliveries<Double>()
    await first?.addSink(to: chain, firstCalls)  // isolates the chain to `first`
    first = nil
    while weakFirst != nil { await Task.yield() }
    let secondCalls = Deliveries<Double>()
    await Holder().addSink(to: chain, secondCalls)
    #expect(secondCalls.values.isEmpty)
    #expect(errors.withLock { $0.map(\.cause) } == [.chainInactive])
    let text = errors.withLock { $0.first?.description } ?? ""
    #expect(text.contains("(the actor it was isolated to is gone)"))
    #expect(!chain.isActive)
  }

  @Test("another actor cannot move a property out of an isolated chain")
  @MainActor
  func otherActorCannotMoveAMember() async {
    let download = Download()
    let errors = Deliveries<BindingError>()
    let chain = Bind.inout(download, \.progress)
      .onError { errors.record($0) }
      .inout(download, \.title, convert: { "\($0)" }, back: { Double($0) })
    #expect(chain.memberCount == 2)
    let label = Label()
    label.text = "untouched"
    await Holder().take(download, label)  // a String chain: would move `title` out of this one
    #expect(chain.memberCount == 2)
    #expect(label.text == "untouched")
  }
}
