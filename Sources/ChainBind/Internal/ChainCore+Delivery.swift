import Synchronization

// Propagation: one change at a time (Docs/Semantics.md, "Propagation", "Re-entrancy",
// "Threading"), and the queue of what waits for the delivering thread.
extension ChainCore {
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
    // A batch is open on some thread: this change may wait for its end (Batch.swift).
    if _slowPath(openBatches.load(ordering: .relaxed) > 0) && deliverInBatch(from: origin, value) {
      return
    }
    lock.lock()
    guard isActive else {
      lock.unlock()
      return
    }
    if isDelivering {
      if _slowPath(isRunningWork) && takesNestedTurn() { return deliverNested(from: origin, value) }
      enqueue(origin: origin, value: value)
      lock.unlock()
      if _slowPath(isTraced) { traceQueued(from: origin, value) }
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
    dropQueue()
    report(origin.error(.feedbackLoop))
  }

  // Chain lock held; unlocks. Runs work for the delivery (a re-read, a new member's or sink's
  // first value): what it changes is delivered right after it, before what other threads queued
  // meanwhile, as if it had all happened when the work was queued.
  // `isOwn`: this thread's own work, not queued by another thread; what it changes counts
  // against the feedback limit.
  func runQueuedWork(_ body: () -> Void, isOwn: Bool = false) {
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
    if _slowPath(isTraced) {
      return runTracedTurn(from: origin, value, skippingFilters: skippingFilters, dead: &dead)
    }
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
      rejected(value)
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
    _ members: MemberList.Borrowed, _ value: Value, from origin: Member, dead: inout [Member]
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
    _ members: MemberList.Borrowed, _ hasOwnedSinks: Bool,
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
    _ members: MemberList.Borrowed, _ sinks: ContiguousArray<Sink<Value>>?, with value: Value,
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
    var index: Int?
    if isFeedback && isRunningWork {
      let extras = extrasInUse
      let next = extras.insertion ?? 0
      extras.insertion = next + 1
      index = next
      change.isFeedback = isRunningOwnWork
    }
    enqueue(.change(change), at: index)
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

  // The initial sync of `member`, a new receiving member that deliveries skip until it is done
  // (its `pendingChanges` counts it, so no other thread writes it meanwhile). Done now, on this
  // thread, as its caller expects (Docs/Semantics.md, "Initial sync"); when another thread
  // delivers meanwhile, finished in the delivery's order, where it gets the latest value.
  func syncNewMember(_ member: Member) {
    lock.lock()
    guard isActive else { return lock.unlock() }
    let thread = currentThreadID()
    if deliverer == 0 || deliverer == thread {
      // No other thread delivers: written now, inside the delivery (taken when free).
      let takes = deliverer == 0
      if takes { deliverer = thread }
      let value = current
      lock.unlock()
      finishSync(of: member, with: value)
      guard takes else { return }
      var dead: [Member] = []
      finishDelivery(dead: &dead)
      return
    }
    let value = current
    lock.unlock()
    var dead: [Member] = []
    if member.isAttached { write(value, to: member, dead: &dead) }
    serialize(toActor: false) { [self] in finishSync(of: member, with: currentValue) }
  }

  private func finishSync(of member: Member, with value: Value) {
    member.pendingChanges.subtract(1, ordering: .relaxed)
    guard member.isAttached else { return }
    var dead: [Member] = []
    write(value, to: member, dead: &dead)
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
    Unretained(member.access).with { access in
      guard access.write != nil else { return }
      guard let object = member.object else {
        dead.append(member)
        return
      }
      access.write?(object, value, member)
    }
  }
}
