import Synchronization

// The part of a chain the registry works on, whatever the chain's value type.
//
// @unchecked Sendable: `members` and `extrasStorage` are guarded by `lock`; `active` is atomic.
// The registry takes a chain's lock only while holding its own lock (order: registry, then
// chain), and no user code ever runs under either.
@usableFromInline
class AnyChain: @unchecked Sendable {
  @usableFromInline let registry: RegistryReference
  let id: UInt64
  // Names the chain in its code: the access of the member it started from.
  let head: MemberAccess
  // Guarded by `lock`. Written and read in the order members were added (Docs/Semantics.md,
  // "Order"). Like every lock-guarded property here, not also checked for exclusive access at
  // run time.
  @usableFromInline @exclusivity(unchecked) var members = MemberList()
  // What most chains never have (an error handler, filters, keyed sinks, a queue), made on first
  // use: a chain with two members and none of it stays small (Docs/Performance.md, "Memory").
  @usableFromInline @exclusivity(unchecked) var extrasStorage: AnyChainExtras?
  // The actor the chain delivers on, once something was added to it from one (Isolation.swift):
  // a retained `ChainIsolation`, set once under `lock` and read unlocked by changes. Not an
  // `AtomicLazyReference`: its load is not inlined, and costs about 150 instructions.
  @usableFromInline let isolationAddress = Atomic<UInt>(0)
  // How many of `members` are owned sinks (guarded by `lock`): a change of a chain with none
  // skips looking for them.
  @usableFromInline @exclusivity(unchecked) var ownedSinkCount: Int32 = 0
  // Guarded by `lock`. Mirror the sizes of the filters, the keyed sinks and the queue in the
  // extras (`ChainCore`): reading these plain integers on every change costs nothing, where
  // asking the generic arrays makes unspecialized code fetch their types. Here, before the
  // bytes below: no padding between them and the chain's value.
  @usableFromInline @exclusivity(unchecked) final var filterCount: Int32 = 0
  @usableFromInline @exclusivity(unchecked) final var sinkCount: Int32 = 0
  @usableFromInline @exclusivity(unchecked) final var queuedCount: Int32 = 0
  // Guarded by `lock`: the thread delivering the chain's changes (`currentThreadID()`), 0 when
  // none does. One thread at a time delivers; what others bring meanwhile is queued for it
  // (Docs/Semantics.md, "Threading").
  @usableFromInline @exclusivity(unchecked) final var deliverer: UInt = 0
  // After the word-sized properties (off Apple platforms the lock is one byte): less padding.
  @usableFromInline let lock = ChainLock()
  @usableFromInline let active = Atomic<Bool>(true)
  // A tracer is set (Tracing.swift): deliveries take the traced path. Set under `lock`.
  @usableFromInline let traced = Atomic<Bool>(false)
  // Guarded by `lock`: members left the chain during the delivery, and wait in the extras for
  // it to end. The delivering thread reads the members without retaining them: a member that
  // leaves meanwhile stays alive until then.
  @usableFromInline @exclusivity(unchecked) var hasRetired = false
  // Guarded by `lock`: the delivering thread runs work (ChainCore.serialize).
  @usableFromInline @exclusivity(unchecked) final var isRunningWork = false
  // Guarded by `lock`: the work running may deliver its one change nested (a re-read).
  @exclusivity(unchecked) final var nestsTurn = false
  @exclusivity(unchecked) final var isRunningOwnWork = false
  // Guarded by `lock`: the chain is counted among its registry's active chains.
  @exclusivity(unchecked) var isCounted = false

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

  // Chain lock held. The extras, made on first use by the chain's own type (`ChainCore`).
  @usableFromInline final var extrasInUse: AnyChainExtras {
    if let extrasStorage { return extrasStorage }
    let extras = makeExtras()
    extrasStorage = extras
    return extras
  }

  @usableFromInline func makeExtras() -> AnyChainExtras { AnyChainExtras() }

  @inlinable final var isActive: Bool { active.load(ordering: .acquiring) }

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

  // Chain lock held. The isolation, when this thread must not deliver: the chain was isolated
  // to an actor after the change got past the setter's check, and this thread is not on it.
  @usableFromInline final var isolationElsewhere: ChainIsolation? {
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
      ?? lock.run { () -> ChainIsolation in
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
      registry.release(self)
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
    registry.release(self)
    return false
  }

  // Chain lock held.
  @inlinable final var isDelivering: Bool { deliverer != 0 }

  // Runs work as part of the chain's one-at-a-time delivery (ChainCore): `now` when it runs on
  // this thread (told whether this thread was already delivering), `later()`, made under the
  // chain's lock, when it must be queued (nil: nothing to queue). `nests`: a change the work makes is delivered at once,
  // nested in it (`takesNestedTurn`).
  func serialize(
    toActor: Bool, nests: Bool = true, now: (_ isDeliveringHere: Bool) -> Void,
    later: () -> (() -> Void)?
  ) { now(false) }

  final func serialize(toActor: Bool, _ work: @escaping () -> Void) {
    serialize(toActor: toActor, nests: false, now: { _ in work() }, later: { work })
  }

  // Chain lock held; `deliverer` is set. Whether the change this thread makes now is delivered
  // at once, nested in the work it runs: the work's first change, when nothing of the work went
  // into the queue yet and no filter can hand the delivery to an actor. Then, until
  // `endNestedTurn`, changes go into the queue as from a turn.
  @usableFromInline
  final func takesNestedTurn() -> Bool {
    guard nestsTurn, deliverer == currentThreadID(), extrasStorage?.insertion == nil,
      filterCount == 0, !isIsolated
    else { return false }
    isRunningWork = false
    return true
  }

  // Registry lock held.
  func markInactive() { active.store(false, ordering: .releasing) }

  enum InsertOutcome {
    case inserted
    // The chain was released meanwhile.
    case inactive
    // Inserted in place of a sender that was the chain's last: the chain must be released.
    case lastSenderReplaced
  }

  // Registry lock held.
  func insert(_ member: Member, replacing old: Member?) -> InsertOutcome {
    lock.run {
      guard isActive else { return .inactive }
      if member.isSink {
        ownedSinkCount += 1
        member.sinkOrder = extrasInUse.numberSink()
      }
      guard let old, let index = members.firstIndex(where: { $0 === old }) else {
        members.append(member)
        return .inserted
      }
      if old.isSink { ownedSinkCount -= 1 }
      retireIfDelivering(old)
      members[index] = member
      if old.role.sends && !members.contains(where: { $0.role.sends }) {
        return .lastSenderReplaced
      }
      return .inserted
    }
  }

  // Registry lock held. Returns whether the chain should be released: its last sending member
  // left (Docs/Semantics.md, "Lifetime"), or no member at all is left. A chain that never had a
  // sender (its head is not observable) stays while it has members: a sender may still join it.
  func remove(_ member: Member) -> Bool {
    lock.run {
      if let index = members.firstIndex(where: { $0 === member }) {
        retireIfDelivering(member)
        members.remove(at: index)
        if member.isSink { ownedSinkCount -= 1 }
      }
      if members.isEmpty { return true }
      return member.role.sends && !members.contains { $0.role.sends }
    }
  }

  // Registry lock held. Empties the chain; the caller releases what it returns after unlocking.
  func takeEverything() -> (members: MemberList, userState: Any?) {
    lock.run {
      let taken = members
      if isDelivering {
        for member in taken { retireIfDelivering(member) }
      }
      members = MemberList()
      ownedSinkCount = 0
      return (taken, takeUserState())
    }
  }

  // Chain lock held. Filters, sinks and queued changes (the error handler stays).
  func takeUserState() -> Any? { nil }

  // Chain lock held. Keeps `member`, which is leaving the chain, alive until the delivery in
  // progress, if any, ends: it may be using the member unretained.
  private func retireIfDelivering(_ member: Member) {
    guard isDelivering else { return }
    extrasInUse.retired.append(member)
    hasRetired = true
  }

  // Chain lock held. The members that left during the delivery that is ending: the caller
  // releases them after unlocking.
  @usableFromInline
  final func takeRetired() -> ContiguousArray<Member> {
    guard hasRetired, let extras = extrasStorage else { return [] }
    hasRetired = false
    defer { extras.retired = [] }
    return extras.retired
  }

  func snapshotMembers() -> MemberList {
    lock.run { members }
  }

  func setErrorHandler(_ handler: @escaping (BindingError) -> Void) {
    let replaced = lock.run { () -> ((BindingError) -> Void)? in
      let extras = extrasInUse
      defer { extras.errorHandler = handler }
      return extras.errorHandler
    }
    // Released here, after unlocking: its captures' deinits may use this chain.
    withExtendedLifetime(replaced) {}
  }

  // Reports to the handler in place now (taken under the lock, called after it); on the chain's
  // actor, later, when the chain is isolated to one and this runs elsewhere.
  func report(_ error: BindingError) {
    // Never counted: released before its head joined, so nobody unbound it. `isCounted` no longer
    // changes once the chain is inactive, which the caller saw (an acquiring load).
    let error =
      error.cause == .chainInactive && !isCounted
      ? BindingError(chain: error.chain, member: error.member, cause: .headNotBound) : error
    guard let handler = lock.run({ extrasStorage?.errorHandler }) else {
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
  // deinit.
  func pruneDeadMembers() {
    // Members with a token are removed by it when their object dies: a chain with no other
    // member is not searched (no weak loads, no copy of the member list).
    lock.lock()
    var members: MemberList?
    for index in self.members.indices where self.members[index].token == nil {
      members = self.members
      break
    }
    lock.unlock()
    guard let members else { return }
    var gone: [Member] = []
    for member in members where member.token == nil && member.object == nil { gone.append(member) }
    if !gone.isEmpty { registry.prune(gone) }
  }

  // Whether the chain has no member, dead ones included.
  var hasNoMembers: Bool {
    lock.lock()
    defer { lock.unlock() }
    return members.isEmpty
  }
}
