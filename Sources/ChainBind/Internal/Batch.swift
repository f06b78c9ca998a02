import Synchronization

// How many batches are open, in every thread (`Bind.batch`): a change outside any batch pays one
// relaxed load of it and a branch (`ChainCore.deliver`); the batch itself, a task-local value, is
// looked up only while this is not zero. One more while a test's scheduler is installed
// (`SchedulePoint`), so that changes take the same slow entry, where the scheduler runs.
@usableFromInline let openBatches = Atomic<Int>(0)

// A test's scheduler (`Bind.withSchedulePoints`, Bind+Testing.swift): while one is installed, a
// change calls it on its way into a chain, before taking the chain's lock or queueing for its
// actor, and so do work for a delivery, a new member's initial sync, and a dying token before it
// tells its tracked members. The scheduler lets one thread at a time go on from these points,
// and so runs every interleaving of a few threads' steps (InterleavingTests).
@usableFromInline
enum SchedulePoint {
  // The closure lives in a box of its own: a closure as `Locked`'s generic state is rewrapped by
  // every `withLock` (Docs/Architecture.md, "Locks").
  final class Scheduler: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  static let isInstalled = Atomic<Bool>(false)
  // The installed boxes' addresses (0: none), read without a lock: every change of every thread
  // reaches a point while a scheduler is installed. Boxes are kept for good (a few per test
  // process), so a thread that loaded one just before it was replaced still calls a live one.
  private static let installed = Atomic<UInt>(0)
  // For the points reached under a registry lock, which a scheduler that lets one thread at a
  // time go on would deadlock at: only tests that ask for them.
  private static let installedUnderLock = Atomic<UInt>(0)
  private static let everInstalled = Locked<[Scheduler]>([])

  @usableFromInline
  @inline(never)
  static func reach() {
    guard isInstalled.load(ordering: .acquiring),
      let address = UnsafeRawPointer(bitPattern: installed.load(ordering: .acquiring))
    else { return }
    Unretained<Scheduler>(address: address).with { $0.run() }
  }

  // A point reached with a registry lock held; only its check inline, on every unbind.
  @inline(__always)
  static func reachUnderLock() {
    if _slowPath(isInstalled.load(ordering: .relaxed)) { runUnderLock() }
  }

  @inline(never)
  private static func runUnderLock() {
    guard let address = UnsafeRawPointer(bitPattern: installedUnderLock.load(ordering: .acquiring))
    else { return }
    Unretained<Scheduler>(address: address).with { $0.run() }
  }

  // Installs the schedulers, or removes those installed (nil).
  static func install(_ scheduler: Scheduler?, underLock: Scheduler? = nil) {
    everInstalled.withLock { $0 += [scheduler, underLock].compactMap { $0 } }
    installed.store(address(of: scheduler), ordering: .releasing)
    installedUnderLock.store(address(of: underLock), ordering: .releasing)
  }

  private static func address(of scheduler: Scheduler?) -> UInt {
    scheduler.map { UInt(bitPattern: Unretained($0).address) } ?? 0
  }
}

// The outermost batch open on one thread, and what changed in it, in the order it first changed
// (Docs/Semantics.md, "Batches").
//
// @unchecked Sendable: a task-local value must be; only the thread that opened the batch touches
// its entries (`isHere`), child tasks that inherit it excepted, which `isHere` turns away.
@usableFromInline
final class Batch: @unchecked Sendable {
  @TaskLocal static var current: Batch?

  // A chain whose value changed; `origin` is the last member that changed it, which holds it,
  // unless another thread's delivery wrote it after the set (`isOriginOverwritten`, read when the
  // change was made: the chain's own writes later in the batch, reverts, leave it holding it).
  private final class Changed {
    let chain: AnyChain
    var origin: Member
    var isOriginOverwritten = false
    let deliver: (Member) -> Void

    init(_ chain: AnyChain, _ origin: Member, _ deliver: @escaping (Member) -> Void) {
      self.chain = chain
      self.origin = origin
      self.deliver = deliver
    }
  }

  private enum Entry {
    case chain(Changed)
    // A tracked member whose dependency changed: re-read once, at the end.
    case reread(TrackedSource)
  }

  private let thread = currentThreadID()
  private var entries: [Entry] = []
  // The index of each chain's and each re-read's entry.
  private var indices: [ObjectIdentifier: Int] = [:]
  // The chain changed last, and its entry, held by `entries`: most changes of a batch are to
  // the chain changed just before, found without a lookup, a retain or a release.
  private var lastChain: ObjectIdentifier?
  private var last: Unretained<Changed>?

  // The batch open on this thread, if any. The thread of the first batch opened while none was
  // open is published with the batch's address: its thread finds it without the task-local
  // lookup (about a third of a batched change's cost). Only that thread reads the address, and
  // only it closes the batch, so the address is valid whenever the thread matches.
  // Unretained: the batch is open, and so held by `Bind.batch`, while this thread runs.
  @usableFromInline static var openHere: Unretained<Batch>? {
    let thread = currentThreadID()
    if soleThread.load(ordering: .acquiring) == thread,
      let pointer = UnsafeRawPointer(bitPattern: soleAddress.load(ordering: .relaxed))
    {
      return Unretained<Batch>(address: pointer)
    }
    guard let batch = current, batch.thread == thread else { return nil }
    return Unretained(batch)
  }

  private static let soleThread = Atomic<UInt>(0)
  private static let soleAddress = Atomic<UInt>(0)

  // The outermost batch on this thread opens: published if no other batch is.
  func publish() -> Bool {
    guard Self.soleThread.load(ordering: .relaxed) == 0 else { return false }
    let address = UInt(bitPattern: Unretained(self).address)
    guard
      Self.soleAddress.compareExchange(expected: 0, desired: address, ordering: .relaxed)
        .exchanged
    else { return false }
    Self.soleThread.store(thread, ordering: .releasing)
    return true
  }

  // Before it delivers: it is no longer open.
  func unpublish() {
    Self.soleThread.store(0, ordering: .releasing)
    Self.soleAddress.store(0, ordering: .releasing)
  }

  // `chain` accepted a change from `origin`, made its value without delivering it. `deliver`
  // is made for the chain's first change only.
  @usableFromInline
  func changed(_ chain: AnyChain, from origin: Member, deliver: () -> (Member) -> Void) {
    let id = ObjectIdentifier(chain)
    let isOverwritten = origin.isOverwritten
    if lastChain == id, let last {
      last.with {
        if $0.origin !== origin { $0.origin = origin }
        $0.isOriginOverwritten = isOverwritten
      }
      return
    }
    lastChain = id
    if let index = indices[id], case .chain(let changed) = entries[index] {
      changed.origin = origin
      changed.isOriginOverwritten = isOverwritten
      last = Unretained(changed)
    } else {
      let changed = Changed(chain, origin, deliver())
      changed.isOriginOverwritten = isOverwritten
      indices[id] = entries.count
      entries.append(.chain(changed))
      last = Unretained(changed)
    }
  }

  // Defers a tracked member's re-read to the end of the batch, once.
  func reread(_ source: TrackedSource) {
    let id = ObjectIdentifier(source)
    guard indices[id] == nil else { return }
    indices[id] = entries.count
    entries.append(.reread(source))
  }

  // After the outermost batch closed: each chain delivers its value once, and each tracked
  // member is re-read once, in the order they first changed.
  func deliver() {
    let entries = self.entries
    self.entries = []
    indices = [:]
    lastChain = nil
    last = nil
    for entry in entries {
      switch entry {
      case .chain(let changed):
        // Written back only when another thread's delivery wrote it after its set.
        if !changed.isOriginOverwritten { changed.origin.clearOverwritten() }
        changed.deliver(changed.origin)
      case .reread(let source):
        // Asked for during the batch: another thread may have read since.
        source.coverLatestWatch()
        source.dependencyChanged()
      }
    }
  }
}

extension ChainCore {
  // A change made in a batch on this thread (`Bind.batch`): filtered now, made the chain's value,
  // and delivered when the outermost batch ends. False when it is delivered as without a batch:
  // no batch is open here, the chain delivers already (the change is queued, as always), or it
  // is isolated to an actor this thread is not on.
  //
  // Inlinable, and so specialized where the member sends, like `deliver`: a batch of changes
  // then costs a fraction of their deliveries (Docs/Performance.md, "Batches").
  @inlinable
  @inline(never)
  final func deliverInBatch(from origin: Member, _ value: Value) -> Bool {
    guard let batch = Batch.openHere else {
      SchedulePoint.reach()
      return false
    }
    let held = acquire()
    if _slowPath(held.isDelivering) { return deliverReadInBatch(from: origin, value, batch, held) }
    guard isActive, !isIsolated || isolationElsewhere(held) == nil
    else {
      release(held)
      return false
    }
    origin.isAdmittedHere = false
    if _slowPath(held.filterCount > 0 || isTraced) {
      return deliverFilteredInBatch(from: origin, value, to: batch, held)
    }
    // No user code to run: the value is made current in one hold of the lock, and no thread
    // delivers meanwhile.
    makeCurrent(value, from: origin, in: batch, held)
    return true
  }

  // Makes an accepted change the chain's value, and tells the batch, which delivers the chain
  // when it ends. The value replaced is released after unlocking.
  @inlinable
  @inline(__always)
  final func makeCurrent(
    _ value: Value, from origin: Member, in batch: Unretained<Batch>,
    _ held: consuming Held
  ) {
    let replaced = current(held)
    setCurrent(value, held)
    release(held)
    withExtendedLifetime(replaced) {}
    batch.with {
      $0.changed(self, from: origin) { { [self] origin in deliverBatched(from: origin) } }
    }
  }

  // A batched change to a chain with filters or a tracer: they run now, in the chain's
  // one-at-a-time delivery.
  @usableFromInline
  @inline(never)
  final func deliverFilteredInBatch(
    from origin: Member, _ value: Value, to batch: Unretained<Batch>,
    _ held: consuming Held
  ) -> Bool {
    held.transition { $0.begin(on: currentThreadID()) }
    var dead = DeadMembers()
    filter(value, from: origin, in: batch, dead: &dead, held)
    finishDelivery(dead: &dead)
    return true
  }

  // What a flat `@Observable` member read in a batch, in the chain's turn on this thread
  // (`TrackedSource.readsInBatch`): filtered now and made the chain's value, as a `@Bound` set
  // in a batch is. False for any other change made while the chain delivers: it is queued.
  @usableFromInline
  @inline(never)
  final func deliverReadInBatch(
    from origin: Member, _ value: Value, _ batch: Unretained<Batch>, _ held: consuming Held
  ) -> Bool {
    guard isActive, held.delivery.isDelivering(on: currentThreadID()),
      origin.tracked?.takesBatchedRead() == true
    else {
      release(held)
      return false
    }
    var dead = DeadMembers()
    filter(value, from: origin, in: batch, dead: &dead, held)
    registry.prune(&dead)
    return true
  }

  // A batched change through the filters, in the chain's turn: an accepted one is made the
  // chain's value.
  private func filter(
    _ value: Value, from origin: Member, in batch: Unretained<Batch>, dead: inout DeadMembers,
    _ held: consuming Held
  ) {
    let previous = current(held)
    let filters = self.filters(held) ?? []
    release(held)
    if accepts(value, from: origin, previous: previous, filters, dead: &dead) {
      makeCurrent(value, from: origin, in: batch, acquire())
    }
  }

  // A batched change through the filters, traced if the chain is: a rejected one is reverted
  // and handed to `onReject` now.
  private func accepts(
    _ value: Value, from origin: Member, previous: Value,
    _ filters: ContiguousArray<(Value) -> Bool>, dead: inout DeadMembers
  ) -> Bool {
    if isTraced {
      trace(.changeReceived(from: tracedName(of: origin), value: describeValue(value)))
    }
    guard let rejecting = filters.indices.first(where: { !filters[$0](value) }) else {
      return true
    }
    if isTraced { trace(.filterRejected(filter: rejecting, value: describeValue(value))) }
    revert(origin, to: previous, dead: &dead)
    rejected(value)
    return false
  }

  // At the end of a batch: delivers the chain's value, in the delivery's order, to every
  // receiving member but `origin` (which holds it) and to every sink, once.
  @usableFromInline
  final func deliverBatched(from origin: Member) {
    serialize(toActor: true) { [self] in
      let held = acquire()
      guard isActive else { return release(held) }
      var dead = DeadMembers()
      let value = current(held)
      if isTraced {
        deliverTraced(value, from: origin, dead: &dead, held)
      } else {
        deliverAccepted(value, from: origin, dead: &dead, held)
      }
      registry.prune(&dead)
    }
  }
}
