import Synchronization

// What a chain's lock guards (`AnyChain._state`), reached only with the proof that it is held
// (`AnyChain.Held`).
@usableFromInline
struct ChainState {
  // Written and read in the order members were added (Docs/Semantics.md, "Order").
  @usableFromInline var members = MemberList()
  // What most chains never have (an error handler, filters, keyed sinks, a queue), made on first
  // use: a chain with two members and none of it stays small (Docs/Performance.md, "Memory").
  @usableFromInline var extras: AnyChainExtras?
  // How many of `members` are owned sinks: a change of a chain with none skips looking for them.
  @usableFromInline var ownedSinkCount: Int32 = 0
  // Mirror the sizes of the filters, the keyed sinks and the queue in the extras (`ChainCore`):
  // reading these plain integers on every change costs nothing, where asking the generic arrays
  // makes unspecialized code fetch their types.
  @usableFromInline var filterCount: Int32 = 0
  @usableFromInline var sinkCount: Int32 = 0
  @usableFromInline var queuedCount: Int32 = 0
  // Who delivers the chain's changes, and what that delivery is doing. One thread at a time
  // delivers; what others bring meanwhile is queued (Docs/Semantics.md, "Threading").
  @usableFromInline var delivery = DeliveryState()
  // Members left the chain during the delivery, and wait in the extras for it to end. The
  // delivering thread reads the members without retaining them: a member that leaves meanwhile
  // stays alive until then.
  @usableFromInline var hasRetired = false
  // The chain is counted among its registry's active chains.
  @usableFromInline var isCounted = false

  @usableFromInline init() {}

  // Whether a thread, or a job on its way, delivers the chain's changes.
  @inlinable var isDelivering: Bool { delivery.isDelivering }
}

// The part of a chain the registry works on, whatever the chain's value type.
//
// @unchecked Sendable: `_state` is reachable only with its lock held (`Held`); the rest is
// atomic or fixed at creation. The registry takes a chain's lock only while holding its own
// (order: registry, then chain), and no user code ever runs under either.
@usableFromInline
class AnyChain: @unchecked Sendable {
  @usableFromInline let registry: RegistryReference
  let id: UInt64
  // Names the chain in its code: the access of the member it started from.
  let head: MemberAccess
  // The actor the chain delivers on, once something was added to it from one (Isolation.swift):
  // a retained `ChainIsolation`, set once under `lock` and read unlocked by changes. Not an
  // `AtomicLazyReference`: its load is not inlined, and costs about 150 instructions.
  @usableFromInline let isolationAddress = Atomic<UInt>(0)
  // Touched only by `Held`: what the lock guards is reachable only with the lock held
  // (.ci/check-locks checks that nothing else names it). Not checked for exclusive access at run
  // time: the lock already makes every access exclusive.
  @usableFromInline @exclusivity(unchecked) final var _state = ChainState()
  // After the state, in its padding (off Apple platforms the lock is one byte).
  @usableFromInline let lock = ChainLock()
  // 0 while the chain is active; once it ended, how (`ChainEnd`), which an error about adding
  // to it tells.
  @usableFromInline let ended = Atomic<UInt8>(0)
  // A tracer is set (Tracing.swift): deliveries take the traced path. Set under `lock`.
  @usableFromInline let traced = Atomic<Bool>(false)
  // The chain's values are `String`s, which an event's line quotes (Tracing.swift).
  var valuesAreText: Bool { false }

  init(registry: RegistryReference, id: UInt64, head: MemberAccess) {
    self.id = id
    self.head = head
    self.registry = registry
    registry.retainIfScoped()
  }

  // Made when asked for: a code refers to its chain weakly, and a chain that kept its own code
  // would give itself a weak-reference side table.
  final var code: ChainCode {
    ChainCode(id: id, head: head.label, chain: self)
  }

  deinit {
    registry.releaseIfScoped()
    let address = isolationAddress.load(ordering: .acquiring)
    if let pointer = UnsafeRawPointer(bitPattern: address) {
      Unretained<ChainIsolation>(address: pointer).release()
    }
  }

  // The extras, made on first use by the chain's own type (`ChainCore`).
  @usableFromInline
  final func extrasInUse(_ held: borrowing Held) -> AnyChainExtras {
    if let extras = held.extras { return extras }
    let extras = makeExtras()
    held.extras = extras
    return extras
  }

  @usableFromInline func makeExtras() -> AnyChainExtras { AnyChainExtras() }

  // The proof that this thread holds the chain's lock, and the only way to the state it guards:
  // `acquire()` makes one, `release(_:)` consumes it. A function that needs the lock borrows a
  // `Held`; one that unlocks consumes it, so that "lock held" and "unlocks" are in signatures.
  @usableFromInline
  struct Held: ~Copyable {
    // The chain that made it, which its caller holds while this lives.
    @usableFromInline let chain: Unretained<AnyChain>

    @inlinable
    init(_ chain: AnyChain) { self.chain = Unretained(chain) }

    // One accessor per field, not one `_read` of the whole state: a coroutine that is not
    // inlined copies the state into a frame it allocates.
    @inlinable var members: MemberList {
      get { chain.with { $0._state.members } }
      nonmutating _modify { yield &chain.object._state.members }
    }
    // Read in place: `members.rest` would copy the list, retaining its members.
    @inlinable var hasMembersPastSecond: Bool { chain.with { $0._state.members.rest != nil } }
    @inlinable var extras: AnyChainExtras? {
      get { chain.with { $0._state.extras } }
      nonmutating set { chain.with { $0._state.extras = newValue } }
    }
    @inlinable var ownedSinkCount: Int32 {
      get { chain.with { $0._state.ownedSinkCount } }
      nonmutating set { chain.with { $0._state.ownedSinkCount = newValue } }
    }
    @inlinable var filterCount: Int32 {
      get { chain.with { $0._state.filterCount } }
      nonmutating set { chain.with { $0._state.filterCount = newValue } }
    }
    @inlinable var sinkCount: Int32 {
      get { chain.with { $0._state.sinkCount } }
      nonmutating set { chain.with { $0._state.sinkCount = newValue } }
    }
    @inlinable var queuedCount: Int32 {
      get { chain.with { $0._state.queuedCount } }
      nonmutating set { chain.with { $0._state.queuedCount = newValue } }
    }
    @inlinable var delivery: DeliveryState { chain.with { $0._state.delivery } }
    // A transition of the delivery's state. Not a mutating call through `delivery`: on this
    // noncopyable proof, ThreadSanitizer takes that for a write of the whole chain object.
    @inlinable
    func transition(_ event: (inout DeliveryState) -> Void) {
      chain.with { event(&$0._state.delivery) }
    }
    @inlinable var hasRetired: Bool {
      get { chain.with { $0._state.hasRetired } }
      nonmutating set { chain.with { $0._state.hasRetired = newValue } }
    }
    @inlinable var isCounted: Bool {
      get { chain.with { $0._state.isCounted } }
      nonmutating set { chain.with { $0._state.isCounted = newValue } }
    }
    @inlinable var isDelivering: Bool { chain.with { $0._state.isDelivering } }
  }

  @inlinable
  final func acquire() -> Held {
    lock.lock()
    return Held(self)
  }

  @inlinable
  final func release(_ held: consuming Held) {
    _ = consume held
    lock.unlock()
  }

  // A proof when no other thread holds the lock; nil, without waiting, when one does.
  final func tryAcquire() -> Held? {
    lock.tryLock() ? Held(self) : nil
  }

  // Runs `body` with the lock held, for configuration (binding, unbinding, sinks, filters).
  final func withLock<Result>(_ body: (borrowing Held) -> Result) -> Result {
    let held = acquire()
    let result = body(held)
    release(held)
    return result
  }

  @inlinable final var isActive: Bool { ended.load(ordering: .acquiring) == 0 }

  @inlinable final var isIsolated: Bool { isolationAddress.load(ordering: .relaxed) != 0 }

  // What to do with a change `origin` made now, in an isolated chain (Isolation.swift).
  @usableFromInline
  final func admission(of origin: Member, clearingEcho: Bool) -> ChainIsolation.Admission {
    let address = isolationAddress.load(ordering: .acquiring)
    guard let pointer = UnsafeRawPointer(bitPattern: address) else { return .nonisolated }
    return Unretained<ChainIsolation>(address: pointer).with {
      $0.admission(of: origin, clearingEcho: clearingEcho)
    }
  }

  // The isolation, when this thread must not deliver: the chain was isolated to an actor after
  // the change got past the setter's check, and this thread is not on it. The lock is held, so
  // that the isolation cannot be set between this check and what the caller does next.
  @usableFromInline
  final func isolationElsewhere(_ held: borrowing Held) -> ChainIsolation? {
    let address = isolationAddress.load(ordering: .acquiring)
    guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
    let isolation = Unretained<ChainIsolation>(address: pointer)
    return isolation.with { $0.isCurrent } ? nil : isolation.object
  }

  @inlinable final var isolation: ChainIsolation? {
    // Relaxed, and a fence only when set: an acquiring load would keep the compiler from reusing
    // values loaded before it, and cost a nonisolated change a retain.
    let address = isolationAddress.load(ordering: .relaxed)
    guard address != 0, let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
    atomicMemoryFence(ordering: .acquiring)
    // Retained by the chain, and never replaced once set.
    return Unretained<ChainIsolation>(address: pointer).object
  }

  // Whether something may be added to this chain from `caller`'s isolation: from no actor, or
  // from the one the chain is isolated to, which it becomes on the first such addition. Reports
  // the refusal otherwise (Docs/Semantics.md, "Isolation").
  final func admits(_ caller: (any Actor)?, adding member: @autoclosure () -> String) -> Bool {
    guard let caller else { return true }
    let isolation =
      self.isolation
      ?? withLock { _ -> ChainIsolation in
        if let isolation = self.isolation { return isolation }
        // Released by the chain's deinit.
        let isolation = ChainIsolation(caller)
        isolationAddress.store(
          UInt(bitPattern: Unretained.retained(isolation).address), ordering: .releasing)
        return isolation
      }
    if isolation.isActor(caller) { return true }
    if isolation.isActorGone {
      // Its actor, and what that actor isolated, is gone: so is the chain.
      registry.release(self, as: .actorGone)
      report(BindingError(chain: code, member: member(), cause: .chainInactive))
      return false
    }
    report(
      BindingError(
        chain: code, member: member(),
        cause: .isolationMismatch(chain: isolation.name, caller: ChainIsolation.name(of: caller))))
    return false
  }

  // Whether the chain is active and may deliver: its actor, if any, is still alive. Releases a
  // chain whose actor is gone.
  final var isUsable: Bool {
    guard isActive else { return false }
    guard let isolation, isolation.isActorGone else { return true }
    registry.release(self, as: .actorGone)
    return false
  }

  // Runs work as part of the chain's one-at-a-time delivery (ChainCore): `now` when it runs on
  // this thread (told whether this thread was already delivering), `later()`, made under the
  // chain's lock (or its actor's queue's), when it must be queued (nil: nothing to queue): it runs
  // no user code and takes no lock. `nests`: a change the work
  // makes is delivered at once, nested in it (`takesNestedTurn`).
  // `workKey`: names the work while it waits, so that it can be taken out (`dropWork(key:)`); a
  // re-read's (`PendingKey.mergesWaiting`) also moves the one waiting last instead of queuing
  // another.
  func serialize(
    toActor: Bool, nests: Bool = true, workKey: PendingKey? = nil,
    now: (_ isDeliveringHere: Bool) -> Void, later: () -> (() -> Void)?
  ) { now(false) }

  // Queues the work `make` makes for the delivery under way on this thread, after what is queued,
  // with `key`, unless work queued with `key` waits.
  func queueWork(unlessWaiting key: PendingKey, _ make: () -> () -> Void) { make()() }

  // Where a tracked member's re-read runs (`beginOwnWork`).
  enum OwnWork {
    // No thread delivered: this thread now does, the work begun; `endOwnWork` ends both.
    case begun
    // The same, on the chain's actor, after what was queued for the actor was delivered.
    case begunAfterDrain
    // This thread delivers already: the work runs inside its delivery, now.
    case insideDelivery
    // Another thread delivers, or the delivery was handed off, or the chain's actor is
    // elsewhere, or the chain was released: the caller serializes the work (or, for the
    // chain's own write of the member, reads it back: `TrackedSource.dependencyChanged`).
    case elsewhere
  }

  // Begins work of this thread's own, as `serialize` would run it, but without its closures (a
  // tracked member's re-read, `TrackedSource.dependencyChanged`): the common cases under one
  // lock, and the rest left to `serialize`. Its schedule point comes before the check, and
  // `serialize`'s before its own: an interleaving test can change the chain in between.
  // `member`: the one whose re-read the work is.
  final func beginOwnWork(for member: Member) -> OwnWork {
    SchedulePoint.reach()
    let held = acquire()
    if !held.isDelivering, isActive, !isIsolated {
      startOwnWork(on: currentThreadID(), nests: true, held)
      return .begun
    }
    return beginOwnWorkOtherwise(held, for: member)
  }

  // The same, for a chain that is delivering, isolated or released. `mayDrain`: on the chain's
  // actor, what was queued for it is delivered first, once, as before a member's change made
  // there (`ChainIsolation.admission`), and so without writing `member`, whose change is newer.
  private func beginOwnWorkOtherwise(
    _ held: consuming Held, for member: Member, mayDrain: Bool = true, afterDrain: Bool = false
  ) -> OwnWork {
    guard isActive, !isIsolated || isolationElsewhere(held) == nil else {
      release(held)
      return .elsewhere
    }
    let thread = currentThreadID()
    if held.delivery.isDelivering(on: thread) {
      release(held)
      return .insideDelivery
    }
    guard !held.isDelivering else {
      release(held)
      return .elsewhere
    }
    if mayDrain, isIsolated, let isolation, isolation.mustDrain {
      release(held)
      member.pendingChanges.add(1, ordering: .relaxed)
      isolation.drainIfQueued()
      member.pendingChanges.subtract(1, ordering: .relaxed)
      return beginOwnWorkOtherwise(acquire(), for: member, mayDrain: false, afterDrain: true)
    }
    // After a drain the work's change is queued, not nested: the queue tells it from the chain's
    // value (`TrackedSource.rereadOtherwise`).
    startOwnWork(on: thread, nests: !afterDrain, held)
    return afterDrain ? .begunAfterDrain : .begun
  }

  // Begins work of this thread's own when no thread delivers the chain and it has no actor (the
  // conversion of a sending member's value, `MemberThunks.send`); `endOwnWork` ends it. False,
  // and nothing begun, otherwise, and in a batch on this thread, which takes the change as it
  // comes (Batch.swift).
  @usableFromInline
  final func beginOwnWorkIfIdle() -> Bool {
    if openBatches.load(ordering: .relaxed) > 0, Batch.openHere != nil { return false }
    SchedulePoint.reach()
    let held = acquire()
    guard !held.isDelivering, isActive, !isIsolated else {
      release(held)
      return false
    }
    startOwnWork(on: currentThreadID(), nests: true, held)
    return true
  }

  // No thread delivers: this thread begins its own work, and delivers what the work changes,
  // after it, up to `endOwnWork`.
  final func startOwnWork(on thread: UInt, nests: Bool, _ held: consuming Held) {
    held.transition { $0.begin(on: thread) }
    held.transition { $0.beginWork(isOwn: true, nests: nests) }
    release(held)
  }

  // The work `startOwnWork` began has ended: delivers what it changed, then ends the delivery
  // (ChainCore). This base class queues nothing: it ends both at once.
  @usableFromInline
  func endOwnWork() {
    let held = acquire()
    held.transition { $0.endWork() }
    held.transition { $0.end() }
    release(held)
  }

  final func serialize(
    toActor: Bool, workKey: PendingKey? = nil, _ work: @escaping () -> Void
  ) {
    serialize(
      toActor: toActor, nests: false, workKey: workKey, now: { _ in work() }, later: { work })
  }

  // Takes out the work queued with `key`, when it has become pointless (its sink was removed):
  // what waits stays bounded by the live sinks (Docs/Semantics.md, "Fair delivery").
  func dropWork(key: PendingKey) {}

  // Takes out the work that waits for `member`, which left: its first value, or its first read
  // as a tracked member. The caller releases it after unlocking. Chain lock held; called only
  // when something is queued (generic code: each call looks up the entries' type metadata).
  func takeWork(of member: Member, _ held: borrowing Held) -> Any? { nil }

  // Whether this thread is the one delivering the chain's changes now.
  final var isDeliveringHere: Bool {
    withLock { $0.delivery.isDelivering(on: currentThreadID()) }
  }

  // A thread delivers. Whether the work's result this thread sends now (`ChainCore.deliver`) is
  // delivered at once, nested in the work: when nothing of the work went into the queue yet and
  // no filter can hand the delivery to an actor. Then, until the work ends, changes go into the
  // queue as from a turn.
  @usableFromInline
  final func takesNestedTurn(_ held: borrowing Held) -> Bool {
    guard held.delivery.work?.nests == true, held.delivery.isDelivering(on: currentThreadID()),
      held.extras?.insertion == nil, held.filterCount == 0, !isIsolated
    else { return false }
    held.transition { $0.takeNestedTurn() }
    return true
  }

  // Under the chain's lock, once.
  func markInactive(_ end: ChainEnd) { ended.store(end.rawValue, ordering: .releasing) }

  enum InsertOutcome {
    case inserted
    // The chain was released meanwhile.
    case inactive
    // Inserted in place of a sender that was the chain's last: the chain must be released.
    case lastSenderReplaced
  }

  // Registry lock held.
  func insert(_ member: Member, replacing old: Member?) -> InsertOutcome {
    withLock { held in
      guard isActive else { return .inactive }
      if member.isSink {
        held.ownedSinkCount += 1
        member.sinkOrder = extrasInUse(held).numberSink()
      }
      guard let old, let index = held.members.firstIndex(where: { $0 === old }) else {
        held.members.append(member)
        return .inserted
      }
      if old.isSink { held.ownedSinkCount -= 1 }
      retireIfDelivering(old, held)
      held.members[index] = member
      if old.role.sends && !held.members.contains(where: { $0.role.sends }) {
        return .lastSenderReplaced
      }
      return .inserted
    }
  }

  // Registry lock held. Returns whether the chain should be released: its last sending member
  // left (Docs/Semantics.md, "Lifetime"), or no member at all is left. A chain that never had a
  // sender (its head is not observable) stays while it has members: a sender may still join it.
  // What waited for the member goes into `garbage`: what waits stays bounded by the members
  // (Docs/Semantics.md, "Fair delivery").
  func remove(_ member: Member, garbage: inout Garbage) -> Bool {
    withLock { held in
      if let index = held.members.firstIndex(where: { $0 === member }) {
        retireIfDelivering(member, held)
        held.members.remove(at: index)
        if member.isSink { held.ownedSinkCount -= 1 }
      }
      if held.queuedCount > 0, let waited = takeWork(of: member, held) { garbage.release(waited) }
      if let extras = held.extras, extras.membersAfterSearch > held.members.count {
        extras.membersAfterSearch = held.members.count
      }
      if held.members.isEmpty { return true }
      return member.role.sends && !held.members.contains { $0.role.sends }
    }
  }

  // Registry lock held. Empties the chain; the caller releases what it returns after unlocking.
  func takeEverything() -> (members: MemberList, userState: Any?) {
    withLock { held in
      let taken = held.members
      if held.isDelivering {
        for member in taken { retireIfDelivering(member, held) }
      }
      held.members = MemberList()
      held.ownedSinkCount = 0
      return (taken, takeUserState(held))
    }
  }

  // Filters, sinks and queued changes (the error handler stays).
  func takeUserState(_ held: borrowing Held) -> Any? { nil }

  // Keeps `member`, which is leaving the chain, alive until the delivery in progress, if any,
  // ends: it may be using the member unretained.
  private func retireIfDelivering(_ member: Member, _ held: borrowing Held) {
    guard held.isDelivering else { return }
    extrasInUse(held).retired.append(member)
    held.hasRetired = true
  }

  // The members that left during the delivery that is ending: the caller releases them after
  // unlocking.
  @usableFromInline
  final func takeRetired(_ held: borrowing Held) -> ContiguousArray<Member> {
    guard held.hasRetired, let extras = held.extras else { return [] }
    held.hasRetired = false
    defer { extras.retired = [] }
    return extras.retired
  }

  // After unlocking: releases the members that left during the delivery that ended. One that
  // moved to another chain meanwhile may have been written by this delivery after its new
  // chain's first write: it gets its new chain's value again, in that chain's order
  // (Docs/Semantics.md, "Threading").
  final func letGo(_ retired: consuming ContiguousArray<Member>) {
    guard !retired.isEmpty else { return }
    for member in retired where member.role.receives {
      // By its object: a dead object's address may be a new object's, whose chain is not to be
      // written by this thread.
      guard let object = member.object,
        let successor = registry.member(of: object, keyPath: member.keyPath),
        successor !== member, successor.chain !== self, successor.role.receives
      else { continue }
      successor.chain.resync(successor)
    }
  }

  // Writes the chain's value into `member` again, in the delivery's order, unless a change of
  // its own or its first value waits (`letGo`).
  func resync(_ member: Member) {}

  func snapshotMembers() -> MemberList {
    withLock { held in held.members }
  }

  func setErrorHandler(_ handler: @escaping (BindingError) -> Void) {
    let replaced = withLock { held -> ((BindingError) -> Void)? in
      let extras = extrasInUse(held)
      defer { extras.errorHandler = handler }
      return extras.errorHandler
    }
    // Released here, after unlocking: its captures' deinits may use this chain.
    withExtendedLifetime(replaced) {}
  }

  // Reports to the handler in place now (taken under the lock, called after it); on the chain's
  // actor, later, when the chain is isolated to one and this runs elsewhere.
  func report(_ error: BindingError) {
    let (isCounted, handler) = withLock { held in
      (held.isCounted, held.extras?.errorHandler)
    }
    // Never counted: released before its head joined, so nobody unbound it. Otherwise an
    // addition to an ended chain says how it ended.
    var error = error
    if error.cause == .chainInactive {
      error =
        isCounted
        ? BindingError(
          chain: error.chain, member: error.member, cause: .chainInactive,
          outcome: ChainEnd(rawValue: ended.load(ordering: .acquiring))?.description)
        : BindingError(chain: error.chain, member: error.member, cause: .headNotBound)
    }
    guard let handler else {
      Bind.fallbackErrorHandler(error)
      return
    }
    // A chain whose actor is gone reports in place: nothing would run the handler there.
    guard let isolation, !isolation.isActorGone else { return handler(error) }
    if isolation.isCurrent {
      // After the errors and changes queued before it.
      isolation.drainIfQueued()
      handler(error)
    } else {
      isolation.enqueue(from: nil, in: self) { handler(error) }
    }
  }

  // Removes members whose objects are gone (Docs/Semantics.md, "Lifetime"). Liveness is checked
  // outside every lock: loading a weak reference may release the last strong one, and so run a
  // deinit. `amortized` (adding a member, or another leaving): a chain of more than
  // `Self.alwaysSearched` members is searched only when it has twice the members its last search
  // left, so that n members are added in O(n) in all; its deliveries and the registry's sweeps
  // still prune the dead ones they find.
  func pruneDeadMembers(amortized: Bool = false) {
    // Members with a token or a control are removed when their object dies: a chain with no
    // other member is not searched (no weak loads, no copy of the member list).
    let members = withLock { held -> MemberList? in
      let members = held.members
      if members.count > Self.alwaysSearched {
        let extras = extrasInUse(held)
        if amortized && members.count < 2 * extras.membersAfterSearch { return nil }
        extras.membersAfterSearch = members.count
      }
      return members.contains { !$0.isEndedByItsObject } ? members : nil
    }
    guard let members else { return }
    var gone: [Member] = []
    for member in members
    where !member.isEndedByItsObject && !member.endsWithItsObject(orUnread: false)
      && member.object == nil
    {
      gone.append(member)
    }
    // Each removal lowers the count the next search waits for (`remove`).
    if !gone.isEmpty { registry.prune(gone) }
  }

  // Chains of this many members or fewer are searched for dead ones at every addition.
  static let alwaysSearched = 8

  // What waits for the delivery, in the chain's queue and for its actor (Bind+Testing.swift).
  final var pendingCount: Int {
    withLock { held in Int(held.queuedCount) } + (isolation?.pendingCount ?? 0)
  }

  final var isIdle: Bool {
    withLock { held in !held.isDelivering && held.queuedCount == 0 }
      && (isolation?.isIdle ?? true)
  }

  // Whether the chain has no member, dead ones included.
  var hasNoMembers: Bool {
    withLock { held in held.members.isEmpty }
  }
}

// How a chain ended, for an error about adding to it (`AnyChain.ended`).
enum ChainEnd: UInt8, CustomStringConvertible {
  // `unbind()` on it, or `Bind.unbind` with its code.
  case unbound = 1
  // Its last sending member was unbound, moved or deallocated.
  case lastSenderGone
  // The actor it was isolated to is gone.
  case actorGone

  var description: String {
    switch self {
    case .unbound: "it was unbound"
    case .lastSenderGone: "its last sending member is gone"
    case .actorGone: "the actor it was isolated to is gone"
    }
  }
}
