import Synchronization

// The part of a chain the registry works on, whatever the chain's value type.
//
// @unchecked Sendable: `members` and `extrasStorage` are guarded by `lock`; `active` is atomic.
// The registry takes a chain's lock only while holding its own lock (order: registry, then
// chain), and no user code ever runs under either.
@usableFromInline
class AnyChain: @unchecked Sendable {
  @usableFromInline let registry: Registry
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
  // Guarded by `lock`: members left the chain during the delivery, and wait in the extras for
  // it to end. The delivering thread reads the members without retaining them: a member that
  // leaves meanwhile stays alive until then.
  @usableFromInline @exclusivity(unchecked) var hasRetired = false
  // Guarded by `lock`: the delivering thread runs work (ChainCore.serialize).
  @usableFromInline @exclusivity(unchecked) final var isRunningWork = false
  // Guarded by `lock`: the work running may deliver its one change nested (a re-read).
  @exclusivity(unchecked) final var nestsTurn = false
  @exclusivity(unchecked) final var isRunningOwnWork = false
  // Guarded by the registry's lock: the chain is counted among its active chains.
  @exclusivity(unchecked) var isCounted = false

  init(registry: Registry, id: UInt64, head: MemberAccess) {
    self.id = id
    self.head = head
    self.registry = registry
  }

  // Made when asked for: a code refers to its chain weakly, and a chain that kept its own code
  // would give itself a weak-reference side table.
  final var code: ChainCode {
    ChainCode(id: id, head: head.label, chain: self)
  }

  deinit {
    let address = isolationAddress.load(ordering: .acquiring)
    if let pointer = UnsafeRawPointer(bitPattern: address) {
      Unmanaged<ChainIsolation>.fromOpaque(pointer).release()
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
    return Unmanaged<ChainIsolation>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
      $0.admission(of: origin, clearingEcho: clearingEcho)
    }
  }

  // Chain lock held. The isolation, when this thread must not deliver: the chain was isolated
  // to an actor after the change got past the setter's check, and this thread is not on it.
  @usableFromInline final var isolationElsewhere: ChainIsolation? {
    let address = isolationAddress.load(ordering: .acquiring)
    guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
    let isolation = Unmanaged<ChainIsolation>.fromOpaque(pointer)
    return isolation._withUnsafeGuaranteedRef { $0.isCurrent }
      ? nil : isolation.takeUnretainedValue()
  }

  @inlinable final var isolation: ChainIsolation? {
    // Relaxed, and a fence only when set: an acquiring load would keep the compiler from reusing
    // values loaded before it, and cost a nonisolated change a retain.
    let address = isolationAddress.load(ordering: .relaxed)
    guard address != 0, let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
    atomicMemoryFence(ordering: .acquiring)
    // Retained by the chain, and never replaced once set.
    return Unmanaged<ChainIsolation>.fromOpaque(pointer).takeUnretainedValue()
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
          UInt(bitPattern: Unmanaged.passRetained(isolation).toOpaque()), ordering: .releasing)
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

  // Whether this thread is delivering the chain's changes now (so a write it makes is an echo,
  // and work it adds runs at once).
  final var isDeliveringHere: Bool {
    lock.run { deliverer == currentThreadID() }
  }

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

// A chain of values of type `Value`: its members, filters, sinks, current value and the queue of
// changes waiting for the change being delivered.
@usableFromInline
final class ChainCore<Value>: AnyChain, @unchecked Sendable {
  // All guarded by `lock`. Not a struct behind the lock: this code runs unspecialized, and a
  // closure-based `withLock` returning generic values would look up run-time type metadata on
  // every change.
  @usableFromInline @exclusivity(unchecked) var current: Value

  // Chain lock held.
  @inlinable final var extras: ChainExtras<Value>? {
    extrasStorage.map { unsafeDowncast($0, to: ChainExtras<Value>.self) }
  }

  // Chain lock held.
  @usableFromInline final var extrasOfType: ChainExtras<Value> {
    unsafeDowncast(extrasInUse, to: ChainExtras<Value>.self)
  }

  @usableFromInline override func makeExtras() -> AnyChainExtras { ChainExtras<Value>() }

  // Chain lock held. nil until first used: making or destroying an empty array of these generic
  // element types looks up their metadata at run time, which cost every chain about a thousand
  // instructions. Setting nil makes no extras.
  @inlinable final var filters: ContiguousArray<(Value) -> Bool>? {
    get { extras?.filters }
    set { if newValue != nil || extrasStorage != nil { extrasOfType.filters = newValue } }
  }
  @inlinable final var sinks: ContiguousArray<Sink<Value>>? {
    get { extras?.sinks }
    set { if newValue != nil || extrasStorage != nil { extrasOfType.sinks = newValue } }
  }
  @inlinable final var queue: ContiguousArray<Queued<Value>>? {
    get { extras?.queue }
    set { if newValue != nil || extrasStorage != nil { extrasOfType.queue = newValue } }
  }
  // The change the chain's list sinks share (ListChange.swift); nil until one is added.
  private var listChange: AnyObject? {
    get { extrasStorage?.listChange }
    set { if newValue != nil || extrasStorage != nil { extrasInUse.listChange = newValue } }
  }

  init(registry: Registry, id: UInt64, head: MemberAccess, current: Value) {
    self.current = current
    super.init(registry: registry, id: id, head: head)
  }

  override func takeUserState() -> Any? {
    // The error handler stays: errors about the released chain (adding to it) still reach it.
    // Most chains have none of these: boxing three empty generic arrays costs thousands of
    // instructions per release.
    guard filterCount > 0 || sinkCount > 0 || queuedCount > 0 || listChange != nil else {
      return nil
    }
    let state: Any = (filters, sinks, queue, listChange)
    listChange = nil
    filters = nil
    sinks = nil
    queue = nil
    filterCount = 0
    sinkCount = 0
    queuedCount = 0
    return state
  }

  var currentValue: Value { lock.run { current } }

  // How many list changes the chain's shared computation made (Bind+Testing.swift).
  var listChangesComputed: Int? {
    lock.run { (listChange as? any ListChangeCounting)?.computedChanges }
  }

  // The change shared by the list sinks of this chain that match elements the same way; made
  // with `diff` for the first of them.
  @usableFromInline
  func sharedListChange<Element>(
    matchesByID: Bool, _ diff: @escaping ([Element], [Element]) -> ListChange<Element>
  ) -> SharedListChange<Element> where Value == [Element] {
    lock.run {
      if let shared = listChange as? SharedListChange<Element>, shared.matchesByID == matchesByID {
        return shared
      }
      let shared = SharedListChange(matchesByID: matchesByID, diff: diff)
      // The first kind of matching added is shared; another kind, rare, is not.
      if listChange == nil { listChange = shared }
      return shared
    }
  }

  // MARK: Configuration

  func addFilter(_ filter: @escaping (Value) -> Bool) -> Bool {
    lock.run {
      guard isActive else { return false }
      filters = (filters ?? []) + [filter]
      filterCount += 1
      return true
    }
  }

  // Adds (or replaces) a keyed sink and calls it first with the chain's current value when
  // `initial`, in the delivery's order; false when the chain is inactive.
  func addSink(_ sink: Sink<Value>, initial: Bool) -> Bool {
    let added = lock.run { () -> (added: Bool, replaced: Sink<Value>?) in
      guard isActive else { return (false, nil) }
      var replaced: Sink<Value>?
      var sinks = self.sinks ?? []
      self.sinks = nil
      defer { self.sinks = sinks }
      if let index = sinks.firstIndex(where: { $0.key == sink.key }) {
        replaced = sinks.remove(at: index)
        replaced?.markRemoved()
      }
      sink.order = extrasInUse.numberSink()
      sinks.append(sink)
      sinkCount = Int32(sinks.count)
      return (true, replaced)
    }
    // Released after unlocking: its captures' deinits may use this chain.
    withExtendedLifetime(added.replaced) {}
    guard added.added else { return false }
    serialize(toActor: false) { [self] in
      guard !sink.isRemoved else { return }
      if initial { sink.body(currentValue) }
      sink.markReady()
    }
    return true
  }

  func removeSink(key: String) -> Sink<Value>? {
    lock.run {
      guard var sinks, let index = sinks.firstIndex(where: { $0.key == key }) else { return nil }
      self.sinks = nil
      defer { self.sinks = sinks }
      let removed = sinks.remove(at: index)
      sinkCount = Int32(sinks.count)
      removed.markRemoved()
      return removed
    }
  }

  // MARK: Propagation

  // Delivers a change that `origin` made. Changes to one chain are delivered one at a time: a
  // change that arrives while another is being delivered (from a sink, from a setter, or from
  // another thread) is queued, and the thread already delivering delivers it next.
  //
  // Inlinable, down to the member loop: specialized in the module of the member that sends, for
  // its chain's value type, it needs no run-time type metadata, value witness calls or generic
  // temporaries. What is rare (queueing, isolation, filters, sinks, dead members) stays out of
  // line, in this module.
  @inlinable
  final func deliver(from origin: Member, _ value: Value) {
    lock.lock()
    guard isActive else {
      lock.unlock()
      return
    }
    if isDelivering {
      if _slowPath(isRunningWork) && takesNestedTurn() { return deliverNested(from: origin, value) }
      enqueue(origin: origin, value: value)
      lock.unlock()
      return
    }
    if _slowPath(isIsolated) && !mayDeliverHere(from: origin, value) { return }
    deliverer = currentThreadID()
    var dead: [Member] = []
    if runTurn(from: origin, value, dead: &dead) {
      if !dead.isEmpty { registry.prune(dead) }
      return
    }
    finishDelivery(dead: &dead)
  }

  // Chain lock held; unlocks. The turn of a change that work this thread runs made: delivered
  // now, as the queue would deliver it next (`takesNestedTurn`), without queueing it.
  @inlinable
  @inline(never)
  final func deliverNested(from origin: Member, _ value: Value) {
    var dead: [Member] = []
    _ = runTurn(from: origin, value, dead: &dead)
    if !dead.isEmpty { registry.prune(dead) }
  }

  // Chain lock held. Whether this thread may deliver the change: it may when the change was
  // made on the chain's actor. Otherwise the chain was isolated after the change got past its
  // setter's check: the change goes to the actor, and this unlocks.
  @usableFromInline
  @inline(never)
  final func mayDeliverHere(from origin: Member, _ value: Value) -> Bool {
    if origin.isAdmittedHere {
      origin.isAdmittedHere = false
      return true
    }
    guard let isolation = isolationElsewhere else { return true }
    lock.unlock()
    isolation.enqueue(from: origin, in: self) { self.deliver(from: origin, value) }
    return false
  }

  // Delivers what was queued meanwhile, then ends the delivery. Called without the lock.
  @inlinable
  @inline(__always)
  final func finishDelivery(dead: inout [Member]) {
    lock.lock()
    if _slowPath(queuedCount > 0 || hasRetired) {
      finishDeliveringQueue(dead: &dead)
      return
    }
    deliverer = 0
    lock.unlock()
    if _slowPath(!dead.isEmpty) { registry.prune(dead) }
  }

  // Chain lock held, something queued: delivers it, then ends the delivery; unlocks.
  @usableFromInline
  @inline(never)
  final func finishDeliveringQueue(dead: inout [Member]) {
    if isActive && queuedCount > 0 && deliverQueue(dead: &dead) {
      if !dead.isEmpty { registry.prune(dead) }
      return
    }
    // Lock held.
    deliverer = 0
    let retired = takeRetired()
    if queuedCount > 0 {
      // The chain was released with changes still queued: drop them after unlocking.
      dropQueue()
    } else {
      lock.unlock()
    }
    withExtendedLifetime(retired) {}
    if !dead.isEmpty { registry.prune(dead) }
  }

  // Chain lock held, the queue not empty; returns with the lock held, or returns true, unlocked,
  // when it handed the delivery over to the chain's actor.
  @inline(never)
  private func deliverQueue(dead: inout [Member]) -> Bool {
    // The changes this delivery made itself (its sinks, setters, conversions) and drained: a
    // runaway feedback loop is reported, not run forever (Docs/Semantics.md, "Re-entrancy").
    var feedback = 0
    repeat {
      if isIsolated, let isolation = isolationElsewhere {
        handOff(to: isolation)
        return true
      }
      do {
        switch dequeue() {
        case .change(let pending):
          if pending.isFeedback {
            feedback += 1
            if feedback > Self.feedbackLimit {
              reportFeedbackLoop(of: pending.origin)
              lock.lock()
              continue
            }
          }
          if runTurn(from: pending.origin, pending.value, dead: &dead) { return true }
        case .work(let body):
          runQueuedWork(body)
        }
        // What was dequeued is released at the end of this scope: after the turn unlocked,
        // before the lock is taken again (releasing it may run a deinit that uses this chain).
      }
      lock.lock()
    } while isActive && queuedCount > 0
    return false
  }

  // How many changes one delivery drains that it made itself, before it reports a feedback loop.
  static var feedbackLimit: Int { 10_000 }

  // Chain lock held; unlocks. Drops what is queued and reports the member that kept changing.
  private func reportFeedbackLoop(of origin: Member) {
    let dropped = queue
    queue = nil
    queuedCount = 0
    lock.unlock()
    releasePending(dropped)
    report(origin.error(.feedbackLoop))
  }

  // Chain lock held; unlocks. Runs work for the delivery (a re-read, a new member's or sink's
  // first value): what it changes is delivered right after it, before what other threads queued
  // meanwhile, as if it had all happened when the work was queued.
  // `isOwn`: this thread's own work, not queued by another thread; what it changes counts
  // against the feedback limit.
  private func runQueuedWork(_ body: () -> Void, isOwn: Bool = false) {
    isRunningWork = true
    isRunningOwnWork = isOwn
    lock.unlock()
    body()
    lock.lock()
    isRunningWork = false
    isRunningOwnWork = false
    nestsTurn = false
    extrasStorage?.insertion = nil
    lock.unlock()
  }

  // The changes in `dropped` are no longer pending.
  private func releasePending(_ dropped: ContiguousArray<Queued<Value>>?) {
    for case .change(let pending) in dropped ?? [] {
      pending.origin.pendingChanges.subtract(1, ordering: .relaxed)
    }
  }

  // Chain lock held; unlocks. The chain was isolated to an actor while this thread delivered:
  // the change being delivered (if any) and every queued one go to the actor, in order, and the
  // delivery with them (`isDelivering` stays set until the actor has delivered them).
  @inline(never)
  private func handOff(to isolation: ChainIsolation) {
    handOff(ContiguousArray(), to: isolation)
  }

  // The same, for a change its filters accepted: it comes first, and they do not run again.
  @usableFromInline
  @inline(never)
  final func handOff(accepted origin: Member, _ value: Value, to isolation: ChainIsolation) {
    origin.pendingChanges.add(1, ordering: .relaxed)
    handOff([.change(PendingChange(origin: origin, value: value, isAccepted: true))], to: isolation)
  }

  private func handOff(
    _ first: ContiguousArray<Queued<Value>>, to isolation: ChainIsolation
  ) {
    var handed = first
    handed += queue ?? []
    queue = nil
    queuedCount = 0
    lock.unlock()
    if !isolation.enqueue(from: nil, in: self, { self.resumeDelivery(handed) }) {
      endAbandonedDelivery(handed)
    }
  }

  // The actor the delivery was handed to is gone, and the chain with it: nothing will resume the
  // delivery, so it ends here, and the members that left meanwhile go.
  private func endAbandonedDelivery(_ handed: ContiguousArray<Queued<Value>>) {
    releasePending(handed)
    lock.lock()
    deliverer = 0
    let retired = takeRetired()
    lock.unlock()
    withExtendedLifetime(retired) {}
  }

  // On the chain's actor: delivers changes handed over by another thread, which left the chain
  // delivering, then what was queued meanwhile.
  private func resumeDelivery(_ handed: ContiguousArray<Queued<Value>>) {
    var dead: [Member] = []
    lock.lock()
    deliverer = currentThreadID()
    lock.unlock()
    for next in handed {
      switch next {
      case .change(let pending):
        pending.origin.pendingChanges.subtract(1, ordering: .relaxed)
        lock.lock()
        guard isActive else {
          lock.unlock()
          continue
        }
        // On the actor, a turn never hands off again.
        _ = runTurn(
          from: pending.origin, pending.value, skippingFilters: pending.isAccepted, dead: &dead)
      case .work(let body):
        lock.lock()
        runQueuedWork(body)
      }
    }
    finishDelivery(dead: &dead)
  }

  // Chain lock held; unlocks, then drops the changes still queued.
  @inline(never)
  private func dropQueue() {
    let dropped = queue
    queue = nil
    queuedCount = 0
    lock.unlock()
    releasePending(dropped)
  }

  // One change: called with the chain lock held, returns with it released. Everything the turn
  // copies lives in this function's locals, so it is all released after unlocking, when this
  // function returns: releasing a sink or a member may run user code.
  // Returns true when the turn handed the delivery over to the chain's actor.
  @inlinable
  @inline(__always)
  final func runTurn(
    from origin: Member, _ value: Value, skippingFilters: Bool = false, dead: inout [Member]
  ) -> Bool {
    if _slowPath(filterCount > 0 && !skippingFilters) {
      return runFilteredTurn(from: origin, value, dead: &dead)
    }
    deliverAccepted(value, from: origin, dead: &dead)
    return false
  }

  // Chain lock held; unlocks. Makes `value` current and delivers it to the members, then the
  // sinks, as they are now. Only the delivering thread writes `current`: the value it replaces is
  // released after unlocking, with `previous`.
  @inlinable
  @inline(__always)
  final func deliverAccepted(_ value: Value, from origin: Member, dead: inout [Member]) {
    let previous = current
    current = value
    // Unretained: a member that leaves during the delivery is kept until it ends.
    let members = self.members.unretained
    let hasOwnedSinks = ownedSinkCount > 0
    let sinks = sinkCount > 0 ? self.sinks : nil
    lock.unlock()
    withExtendedLifetime(previous) {}
    deliverToMembers(members, value, from: origin, dead: &dead)
    callSinks(members, hasOwnedSinks, sinks, with: value, dead: &dead)
  }

  // A turn through the chain's filters. Out of line (most chains have none), and specialized
  // like `deliver`.
  @inlinable
  @inline(never)
  final func runFilteredTurn(from origin: Member, _ value: Value, dead: inout [Member]) -> Bool {
    let previous = current
    let filters = self.filters ?? []
    lock.unlock()
    if !accepts(value, filters) {
      // Rejected: nothing is written, no sink runs, and the origin, if still bound, gets the
      // last accepted value back.
      // Not when the origin has a newer change of its own queued: that one is delivered next.
      if origin.isAttached && isActive && origin.pendingChanges.load(ordering: .relaxed) == 0 {
        write(previous, to: origin, dead: &dead)
      }
      return false
    }
    // Accepted. Taken again with the new value in place, so a member or sink that a filter
    // added is in; the copies it replaces are released after unlocking.
    lock.lock()
    if isIsolated, let isolation = isolationElsewhere {
      // Isolated while the filters ran: what the actor added must run on it.
      handOff(accepted: origin, value, to: isolation)
      return true
    }
    deliverAccepted(value, from: origin, dead: &dead)
    return false
  }

  // Writes `value` into every member that receives, but the origin and the owned sinks. The
  // origin is not written back, even when it left the chain meanwhile: its change was made while
  // it was a member, so it is delivered all the same.
  @inlinable
  @inline(__always)
  final func deliverToMembers(
    _ members: MemberList.Unretained, _ value: Value, from origin: Member, dead: inout [Member]
  ) {
    withUnsafePointer(to: value) { value in
      members.forEachMember { member in
        // A member with a change of its own waiting in the queue keeps that newer value: the
        // change is delivered next, and this older one must not overwrite it.
        guard member !== origin, member.role.receives, !member.isSink, member.isAttached,
          member.pendingChanges.load(ordering: .relaxed) == 0, isActive
        else { return }
        write(at: value, to: member, dead: &dead)
      }
    }
  }

  @inlinable
  final func accepts(_ value: Value, _ filters: ContiguousArray<(Value) -> Bool>) -> Bool {
    // A plain loop: `allSatisfy { $0(value) }` would box the closure's captured `value`.
    for index in filters.indices where !filters[index](value) { return false }
    return true
  }

  // Sinks after every member, owned and keyed, in the order they were added.
  @inlinable
  @inline(__always)
  final func callSinks(
    _ members: MemberList.Unretained, _ hasOwnedSinks: Bool,
    _ sinks: ContiguousArray<Sink<Value>>?, with value: Value, dead: inout [Member]
  ) {
    if _slowPath(hasOwnedSinks) {
      callMergedSinks(members, sinks, with: value, dead: &dead)
    } else if let sinks {
      call(sinks, with: value)
    }
  }

  // The owned sinks among `members` and the keyed `sinks`, merged by the order they were added.
  @usableFromInline
  @inline(never)
  final func callMergedSinks(
    _ members: MemberList.Unretained, _ sinks: ContiguousArray<Sink<Value>>?, with value: Value,
    dead: inout [Member]
  ) {
    let keyed = sinks ?? []
    var next = 0
    members.forEachMember { member in
      guard member.isSink else { return }
      while next < keyed.count && keyed[next].order < member.sinkOrder {
        if keyed[next].isReady && isActive { keyed[next].body(value) }
        next += 1
      }
      // An owned sink waiting for its first call (pending) is not called before it.
      if member.isAttached && member.pendingChanges.load(ordering: .relaxed) == 0 && isActive {
        write(value, to: member, dead: &dead)
      }
    }
    while next < keyed.count {
      if keyed[next].isReady && isActive { keyed[next].body(value) }
      next += 1
    }
  }

  @usableFromInline
  @inline(never)
  final func call(_ sinks: ContiguousArray<Sink<Value>>, with value: Value) {
    for sink in sinks where sink.isReady && isActive { sink.body(value) }
  }

  // Chain lock held.
  @usableFromInline
  @inline(never)
  final func enqueue(origin: Member, value: Value) {
    if let tracked = origin.tracked, tracked.isEchoRead {
      // A tracked member read back what the delivery wrote into its path: not a change.
      var read = value
      var written = current
      if bindIsEqual(&read, &written) { return }
    }
    origin.pendingChanges.add(1, ordering: .relaxed)
    // Made by the delivering thread itself: from a sink, a setter or a conversion, or from
    // work the delivery runs (then it goes right after that work).
    let isFeedback = deliverer == currentThreadID()
    var change = PendingChange(origin: origin, value: value)
    change.isFeedback = isFeedback
    var insertion: Int?
    if isFeedback && isRunningWork {
      let extras = extrasInUse
      insertion = extras.insertion ?? 0
      extras.insertion = (insertion ?? 0) + 1
      change.isFeedback = isRunningOwnWork
    }
    enqueue(.change(change), at: insertion)
  }

  // Chain lock held; another thread delivers. `work` runs in the delivery's order.
  final func enqueue(work: @escaping () -> Void) {
    enqueue(.work(work), at: nil)
  }

  private func enqueue(_ entry: Queued<Value>, at index: Int?) {
    var pending = queue ?? []
    queue = nil  // moved out and back: appended in place, not copied
    if let index {
      pending.insert(entry, at: index)
    } else {
      pending.append(entry)
    }
    queue = pending
    queuedCount += 1
  }

  // Chain lock held; the queue is not empty.
  private func dequeue() -> Queued<Value> {
    var queued = queue ?? []
    queue = nil
    let next = queued.removeFirst()
    queue = queued
    queuedCount -= 1
    if case .change(let pending) = next {
      pending.origin.pendingChanges.subtract(1, ordering: .relaxed)
    }
    return next
  }

  // Runs `work` inside the chain's one-at-a-time delivery (Docs/Semantics.md, "Threading"): at
  // once when no thread delivers (this thread then delivers what `work` causes) or this thread
  // does; otherwise it is queued for the thread that delivers, which never waits for it.
  // `toActor`: in a chain isolated to an actor, off the actor, `work` is queued for the actor.
  override func serialize(
    toActor: Bool, nests: Bool = true, now: (_ isDeliveringHere: Bool) -> Void,
    later: () -> (() -> Void)?
  ) {
    if toActor, isIsolated, let isolation, !isolation.isActorGone, !isolation.isCurrent {
      guard let work = later() else { return }
      isolation.enqueue(from: nil, in: self) { self.serialize(toActor: false, work) }
      return
    }
    lock.lock()
    guard isActive else { return lock.unlock() }
    let thread = currentThreadID()
    if deliverer == thread {
      lock.unlock()
      return now(true)
    }
    if deliverer != 0 {
      // nil: merged into work queued already.
      if let work = later() { enqueue(work: work) }
      return lock.unlock()
    }
    deliverer = thread
    nestsTurn = nests
    runQueuedWork({ now(false) }, isOwn: true)
    var dead: [Member] = []
    finishDelivery(dead: &dead)
  }

  // The initial sync of `member`, a new receiving member that deliveries skip until it is done
  // (its `pendingChanges` counts it, so no other thread writes it meanwhile). Done now, on this
  // thread, as its caller expects (Docs/Semantics.md, "Initial sync"); when another thread
  // delivers meanwhile, finished in the delivery's order, where it gets the latest value.
  func syncNewMember(_ member: Member) {
    lock.lock()
    guard isActive, deliverer != 0, deliverer != currentThreadID() else {
      lock.unlock()
      return serialize(toActor: false) { [self] in finishSync(of: member) }
    }
    let value = current
    lock.unlock()
    var dead: [Member] = []
    if member.isAttached { write(value, to: member, dead: &dead) }
    serialize(toActor: false) { [self] in finishSync(of: member) }
  }

  private func finishSync(of member: Member) {
    member.pendingChanges.subtract(1, ordering: .relaxed)
    guard member.isAttached else { return }
    var dead: [Member] = []
    write(currentValue, to: member, dead: &dead)
  }

  // Writes `value` into one member (a revert, or the initial sync of a new member).
  @usableFromInline
  final func write(_ value: Value, to member: Member, dead: inout [Member]) {
    withUnsafePointer(to: value) { write(at: $0, to: member, dead: &dead) }
  }

  // Writes the `Value` at `value` into `member`, unless it cannot receive; a member whose object
  // is gone goes into `dead`.
  @inlinable
  @inline(__always)
  final func write(at value: UnsafePointer<Value>, to member: Member, dead: inout [Member]) {
    // Called in place, not copied out: a copy would retain its context. The member holds its
    // access: used without a retain of its own.
    Unmanaged.passUnretained(member.access)._withUnsafeGuaranteedRef { access in
      guard access.write != nil else { return }
      guard let object = member.object else {
        dead.append(member)
        return
      }
      access.write?(object, value, member)
    }
  }
}

// What a chain rarely has, made on first use; guarded by the chain's lock.
@usableFromInline
class AnyChainExtras {
  // Kept when the chain is released: errors about adding to it still reach it.
  @exclusivity(unchecked) final var errorHandler: ((BindingError) -> Void)?
  // The change the chain's list sinks share (ListChange.swift).
  @exclusivity(unchecked) final var listChange: AnyObject?
  // Members that left the chain while it delivered (`AnyChain.hasRetired`).
  @exclusivity(unchecked) final var retired: ContiguousArray<Member> = []
  // While the delivering thread runs queued work: where the next change it makes is queued.
  @exclusivity(unchecked) final var insertion: Int?
  // Numbers keyed and owned sinks in the order they were added, across both.
  @exclusivity(unchecked) private final var sinksAdded: Int32 = 0

  @usableFromInline init() {}

  final func numberSink() -> Int32 {
    sinksAdded += 1
    return sinksAdded
  }
}

@usableFromInline
final class ChainExtras<Value>: AnyChainExtras {
  @usableFromInline @exclusivity(unchecked) final var filters: ContiguousArray<(Value) -> Bool>?
  @usableFromInline @exclusivity(unchecked) final var sinks: ContiguousArray<Sink<Value>>?
  @usableFromInline @exclusivity(unchecked) final var queue: ContiguousArray<Queued<Value>>?
}

// What waits for the thread delivering a chain's changes.
@usableFromInline
enum Queued<Value> {
  case change(PendingChange<Value>)
  // Work that must run in the delivery's order: a tracked member's re-read, the first value of
  // a member or sink added while another thread delivers.
  case work(() -> Void)
}

@usableFromInline
struct PendingChange<Value> {
  let origin: Member
  let value: Value
  // Handed to the chain's actor after its filters accepted it: they do not run again.
  var isAccepted = false
  // Made by the delivering thread during its delivery: counted against the feedback limit.
  var isFeedback = false
}

// A keyed sink. Its state lets a delivery that already copied the sink list skip a sink that was
// removed or replaced meanwhile, or that has not had its first call yet (it was added while
// another thread delivered: that call comes in the delivery's order, Docs/Semantics.md, "Sinks").
@usableFromInline
final class Sink<Value>: @unchecked Sendable {
  let key: String
  let body: (Value) -> Void
  // Its place among the chain's sinks, owned ones included; set under the chain lock when added.
  @exclusivity(unchecked) var order: Int32 = 0
  private let state = Atomic<UInt8>(Sink.waiting)

  private static var waiting: UInt8 { 0 }
  private static var ready: UInt8 { 1 }
  private static var removed: UInt8 { 2 }

  init(key: String, body: @escaping (Value) -> Void) {
    self.key = key
    self.body = body
  }

  var isRemoved: Bool { state.load(ordering: .acquiring) == Self.removed }
  // Called by deliveries: it had its first call (or was added without one) and is not removed.
  var isReady: Bool { state.load(ordering: .acquiring) == Self.ready }
  func markRemoved() { state.store(Self.removed, ordering: .releasing) }
  func markReady() {
    _ = state.compareExchange(
      expected: Self.waiting, desired: Self.ready, ordering: .acquiringAndReleasing)
  }
}
