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
  // `isWorkResult`: the change is what a conversion this thread runs as work found (a tracked
  // member's read that is work of its own marks itself, `Member.isSendingRead`). A work's result
  // goes before what the work's user code changed meanwhile: delivered at once, nested in the
  // work, when nothing of it was queued (`takesNestedTurn`), else queued ahead of those changes.
  @inlinable
  final func deliver(from origin: Member, _ value: Value, isWorkResult: Bool = false) {
    // A batch is open on some thread: this change may wait for its end (Batch.swift).
    if _slowPath(openBatches.load(ordering: .relaxed) > 0) && deliverInBatch(from: origin, value) {
      return
    }
    let held = acquire()
    guard isActive else { return release(held) }
    if held.isDelivering {
      if _slowPath(held.delivery.work != nil) && (isWorkResult || origin.isSendingRead)
        && takesNestedTurn(held)
      {
        return deliverNested(from: origin, value, held)
      }
      if isEchoRead(from: origin, value, held) { return release(held) }
      let replaced = enqueue(origin: origin, value: value, isWorkResult: isWorkResult, held)
      release(held)
      withExtendedLifetime(replaced) {}
      if _slowPath(isTraced) { traceQueued(from: origin, value) }
      return
    }
    if _slowPath(isIsolated), let isolation = isolationOfChange(from: origin, held) {
      release(held)
      return send(from: origin, value, to: isolation)
    }
    held.transition { $0.begin(on: currentThreadID()) }
    var dead = DeadMembers()
    if runTurn(from: origin, value, dead: &dead, held) {
      registry.prune(&dead)
      return
    }
    finishDelivery(dead: &dead)
  }

  // The turn of a change that work this thread runs made: delivered now, as the queue would
  // deliver it next (`takesNestedTurn`), without queueing it.
  @inlinable
  @inline(never)
  final func deliverNested(from origin: Member, _ value: Value, _ held: consuming Held) {
    var dead = DeadMembers()
    _ = runTurn(from: origin, value, dead: &dead, held)
    registry.prune(&dead)
  }

  // The actor a change must go to: nil when this thread may deliver it, which it may when the
  // change was made on the chain's actor. Otherwise the chain was isolated after the change got
  // past its setter's check.
  @usableFromInline
  @inline(never)
  final func isolationOfChange(
    from origin: Member, _ held: borrowing Held
  ) -> ChainIsolation? {
    if origin.isAdmittedHere {
      origin.isAdmittedHere = false
      return nil
    }
    return isolationElsewhere(held)
  }

  @usableFromInline
  @inline(never)
  final func send(from origin: Member, _ value: Value, to isolation: ChainIsolation) {
    isolation.enqueue(from: origin, in: self) { self.deliver(from: origin, value) }
  }

  // Ends the delivery this thread began with a change or work of its own: delivers what that
  // made meanwhile (its sinks', setters' and work's changes) and `budget` entries more that other
  // threads queued, and leaves the rest to a relay (`handToRelay`): how long a call takes never
  // depends on how long other threads keep changing the chain (Docs/Semantics.md, "Fair
  // delivery").
  @inlinable
  @inline(__always)
  final func finishDelivery(budget: Int = 0, dead: inout DeadMembers) {
    finishDelivery(budget: budget, dead: &dead, acquire())
  }

  // The same, with the lock held.
  @inlinable
  @inline(__always)
  final func finishDelivery(budget: Int = 0, dead: inout DeadMembers, _ held: consuming Held) {
    if _slowPath(held.queuedCount > 0 || held.hasRetired) {
      finishDeliveringQueue(budget: budget, dead: &dead, held)
      return
    }
    held.transition { $0.end() }
    release(held)
    registry.prune(&dead)
  }

  // Something queued, or members retired: delivers what is queued, then ends the delivery.
  @usableFromInline
  @inline(never)
  final func finishDeliveringQueue(budget: Int, dead: inout DeadMembers, _ held: consuming Held) {
    if isActive && held.queuedCount > 0 {
      guard let kept = deliverQueue(budget: budget, dead: &dead, held) else {
        registry.prune(&dead)
        return
      }
      held = kept
    }
    extras(held)?.deliveredDepth = 0
    held.transition { $0.end() }
    let retired = takeRetired(held)
    if held.queuedCount > 0 {
      // The chain was released with changes still queued: drop them after unlocking.
      dropQueue(held)
    } else {
      release(held)
    }
    letGo(retired)
    registry.prune(&dead)
  }

  // The queue not empty: delivers it, this thread's own changes and `budget` of the others'.
  // Gives the lock back, still held, or nil when it handed the delivery over to the chain's
  // actor or to a relay (then unlocked).
  @inline(never)
  private func deliverQueue(
    budget: Int, dead: inout DeadMembers, _ held: consuming Held
  ) -> Held? {
    // The changes this call delivered that the delivery made itself: a loop whose turns each
    // make more than one change grows wide, not deep.
    var own = 0
    var budget = budget
    repeat {
      if isIsolated, let isolation = isolationElsewhere(held) {
        handOff(to: isolation, held)
        return nil
      }
      if !isOwnNext(held) {
        // The fair-delivery transition: another thread's entry beyond this call's share goes,
        // with the rest, to the chain's actor, or to a relay.
        guard budget > 0 else {
          if let isolation, !isolation.isActorGone {
            handOff(to: isolation, held)
          } else {
            handToRelay(held)
          }
          return nil
        }
        budget -= 1
      }
      do {
        switch dequeue(held) {
        case .change(let pending):
          // A change the loop of changes before it made, each in the delivery of the last,
          // however the delivery passed between threads meanwhile; or one of too many this call
          // made itself: a runaway feedback loop is reported, not run forever
          // (Docs/Semantics.md, "Re-entrancy").
          if pending.isFeedback { own += 1 }
          if pending.feedbackDepth > Self.feedbackLimit || own > Self.feedbackLimit {
            own = 0
            reportFeedbackLoop(of: pending.origin, dead: &dead, held)
            held = acquire()
            continue
          }
          extras(held)?.deliveredDepth = pending.feedbackDepth
          if runTurn(from: pending.origin, pending.value, dead: &dead, held) { return nil }
        case .work(let body):
          runQueuedWork(body, held)
        }
        // What was dequeued is released at the end of this scope: after the turn unlocked,
        // before the lock is taken again (releasing it may run a deinit that uses this chain).
      }
      held = acquire()
    } while isActive && held.queuedCount > 0
    return held
  }

  // How many changes a delivery makes itself before a feedback loop is reported: in a row, each
  // made by the delivery of the last (`feedbackDepth`), or delivered by one call.
  static var feedbackLimit: Int { 10_000 }

  // Whether the next entry was made by this delivery itself.
  private func isOwnNext(_ held: borrowing Held) -> Bool {
    guard case .change(let pending)? = extras(held)?.queue?.first else { return false }
    return pending.isOwn
  }

  // Leaves what is queued to a relay, a job on another thread that delivers it as its own call
  // would (`relay`); until it runs, changes made meanwhile wait in the queue, replacing their
  // members' older ones.
  private func handToRelay(_ held: consuming Held) {
    extras(held)?.deliveredDepth = 0
    held.transition { $0.handOff() }
    // This thread is done with the members it read unretained.
    let retired = takeRetired(held)
    release(held)
    letGo(retired)
    Relay.start { [self] in relay() }
  }

  // The relay's job: delivers what was pending when it began, and leaves the rest to another.
  private func relay() {
    let held = acquire()
    held.transition { $0.resume(on: currentThreadID()) }
    var dead = DeadMembers()
    finishDeliveringQueue(budget: Int(held.queuedCount), dead: &dead, held)
  }

  // Drops the changes the loop queued and reports the member that kept changing.
  // `origin` made the change past the limit, dequeued and dropped. The members whose changes
  // are dropped hold values the chain never took: each gets the chain's value back, unless a
  // change of its own still waits.
  private func reportFeedbackLoop(
    of origin: Member, dead: inout DeadMembers, _ held: consuming Held
  ) {
    let dropped = dropFeedback(held)
    let value = current(held)
    release(held)
    releasePending(dropped)
    var origins = [origin]
    for case .change(let pending) in dropped ?? []
    where !origins.contains(where: { $0 === pending.origin }) {
      origins.append(pending.origin)
    }
    for member in origins { revert(member, to: value, dead: &dead) }
    // What those writes' setters changed is the loop's too: dropped, and not restored again, or
    // a loop through setters would start anew.
    let more = acquire()
    let changed = dropFeedback(more)
    release(more)
    releasePending(changed)
    report(origin.error(.feedbackLoop))
  }

  // Takes the changes the delivery made itself out of the queue. Other threads' changes stay,
  // and are delivered (the chain ends at the last of them), and so does the work (a re-read, a
  // new member's first value, a tracked member's first read): dropped, a new member's first
  // value left it skipped by every later delivery, and a re-read left its member's next
  // re-reads merged into nothing.
  private func dropFeedback(_ held: borrowing Held) -> ContiguousArray<Queued<Value>>? {
    let extras = extras(held)
    let dropped = extras?.queue?.removeAll { entry in
      if case .change(let pending) = entry { return pending.isFeedback }
      return false
    }
    // What the kept work leads to starts a count of its own.
    extras?.deliveredDepth = 0
    held.queuedCount -= Int32(dropped?.count ?? 0)
    return dropped
  }

  // Runs queued work for the delivery (a re-read, a new member's or sink's first value), without
  // the lock: what it changes is delivered right after it, before what other threads queued
  // meanwhile, as if it had all happened when the work was queued. (This thread's own work is
  // `startOwnWork`'s: what it changes counts against the feedback limit.)
  func runQueuedWork(_ body: () -> Void, _ held: consuming Held) {
    held.transition { $0.beginWork(isOwn: false, nests: false) }
    release(held)
    body()
    let after = acquire()
    after.transition { $0.endWork() }
    after.extras?.insertion = nil
    release(after)
  }

  // The changes in `dropped` are no longer pending.
  private func releasePending(_ dropped: ContiguousArray<Queued<Value>>?) {
    for case .change(let pending) in dropped ?? [] {
      pending.origin.pendingChanges.subtract(1, ordering: .relaxed)
    }
  }

  // The chain was isolated to an actor while this thread delivered: the change being delivered
  // (if any) and every queued one go to the actor, in order, and the delivery with them
  // (`isDelivering` stays set until the actor has delivered them).
  @inline(never)
  private func handOff(to isolation: ChainIsolation, _ held: consuming Held) {
    handOff(ContiguousArray(), to: isolation, held)
  }

  // The same, for a change its filters accepted: it comes first, and they do not run again.
  @usableFromInline
  @inline(never)
  final func handOff(
    accepted origin: Member, _ value: Value, to isolation: ChainIsolation,
    _ held: consuming Held
  ) {
    origin.pendingChanges.add(1, ordering: .relaxed)
    var change = PendingChange(origin: origin, value: value, isAccepted: true)
    change.feedbackDepth = extras(held)?.deliveredDepth ?? 0  // the change being delivered
    handOff([.change(change)], to: isolation, held)
  }

  private func handOff(
    _ first: ContiguousArray<Queued<Value>>, to isolation: ChainIsolation,
    _ held: consuming Held
  ) {
    var handed = first
    if let extras = extras(held) {
      handed += extras.queue?.removeAll() ?? []
      extras.queue = nil
    }
    held.queuedCount = 0
    // Each handed change carries its own depth (`resumeDelivery`).
    extras(held)?.deliveredDepth = 0
    // No thread delivers until the actor resumes: this one is done with the members it read
    // unretained.
    held.transition { $0.handOff() }
    let retired = takeRetired(held)
    release(held)
    letGo(retired)
    if !isolation.enqueue(from: nil, in: self, { self.resumeDelivery(handed) }) {
      endAbandonedDelivery(handed)
    }
  }

  // The actor the delivery was handed to is gone, and the chain with it: nothing will resume the
  // delivery, so it ends here, and the members that left meanwhile go.
  private func endAbandonedDelivery(_ handed: ContiguousArray<Queued<Value>>) {
    releasePending(handed)
    let held = acquire()
    held.transition { $0.abandon() }
    let retired = takeRetired(held)
    release(held)
    letGo(retired)
  }

  // On the chain's actor: delivers changes handed over by another thread, which left the chain
  // delivering, then what was queued meanwhile.
  private func resumeDelivery(_ handed: ContiguousArray<Queued<Value>>) {
    var dead = DeadMembers()
    let budget = withLock { held -> Int in
      held.transition { $0.resume(on: currentThreadID()) }
      return Int(held.queuedCount)
    }
    for next in handed {
      switch next {
      case .change(let pending):
        pending.origin.pendingChanges.subtract(1, ordering: .relaxed)
        let held = acquire()
        guard isActive else {
          release(held)
          continue
        }
        extras(held)?.deliveredDepth = pending.feedbackDepth
        // On the actor, a turn never hands off again.
        _ = runTurn(
          from: pending.origin, pending.value, skippingFilters: pending.isAccepted, dead: &dead,
          held)
      case .work(let body):
        runQueuedWork(body, acquire())
      }
    }
    if !handed.isEmpty { withLock { extras($0)?.deliveredDepth = 0 } }
    finishDelivery(budget: budget, dead: &dead)
  }

  // Unlocks, then drops the changes still queued.
  @inline(never)
  private func dropQueue(_ held: consuming Held) {
    let extras = extras(held)
    let dropped = extras?.queue?.removeAll()
    extras?.queue = nil
    held.queuedCount = 0
    release(held)
    releasePending(dropped)
  }

  // One change, from the lock held to its release. Everything the turn copies lives in this
  // function's locals, so it is all released after unlocking, when this function returns:
  // releasing a sink or a member may run user code.
  // Returns true when the turn handed the delivery over to the chain's actor.
  @inlinable
  @inline(__always)
  final func runTurn(
    from origin: Member, _ value: Value, skippingFilters: Bool = false, dead: inout DeadMembers,
    _ held: consuming Held
  ) -> Bool {
    if _slowPath(isTraced) {
      return runTracedTurn(
        from: origin, value, skippingFilters: skippingFilters, dead: &dead, held)
    }
    if _slowPath(held.filterCount > 0 && !skippingFilters) {
      return runFilteredTurn(from: origin, value, dead: &dead, held)
    }
    deliverAccepted(value, from: origin, dead: &dead, held)
    return false
  }

  // Makes `value` current and delivers it, after unlocking, to the members, then the sinks, as
  // they are now. Only the delivering thread writes `current`: the value it replaces is
  // released after unlocking, with `previous`.
  @inlinable
  @inline(__always)
  final func deliverAccepted(
    _ value: Value, from origin: Member, dead: inout DeadMembers, _ held: consuming Held
  ) {
    let previous = current(held)
    setCurrent(value, held)
    let hasOwnedSinks = held.ownedSinkCount > 0
    let sinks = held.sinkCount > 0 ? self.sinks(held) : nil
    // Unretained: a member that leaves during the delivery is kept until it ends. Two paths:
    // with no members past the second there is no array to retain, nor to release after.
    guard _slowPath(held.hasMembersPastSecond) else {
      let members = held.members.unretainedFirstTwo
      release(held)
      withExtendedLifetime(previous) {}
      deliverToMembers(members, value, from: origin, dead: &dead)
      callSinks(members, hasOwnedSinks, sinks, with: value, dead: &dead)
      return
    }
    let members = held.members.unretained
    release(held)
    withExtendedLifetime(previous) {}
    deliverToMembers(members, value, from: origin, dead: &dead)
    callSinks(members, hasOwnedSinks, sinks, with: value, dead: &dead)
  }

  // A turn through the chain's filters. Out of line (most chains have none), and specialized
  // like `deliver`.
  @inlinable
  @inline(never)
  final func runFilteredTurn(
    from origin: Member, _ value: Value, dead: inout DeadMembers, _ held: consuming Held
  ) -> Bool {
    let previous = current(held)
    let filters = self.filters(held) ?? []
    release(held)
    if !accepts(value, filters) {
      // Rejected: nothing is written, no sink runs, and the origin, if still bound, gets the
      // last accepted value back.
      // Not when the origin has a newer change of its own queued: that one is delivered next.
      if origin.takesDelivery && isActive {
        write(previous, to: origin, dead: &dead)
      }
      rejected(value)
      return false
    }
    // Accepted. Taken again with the new value in place, so a member or sink that a filter
    // added is in; the copies it replaces are released after unlocking.
    let accepted = acquire()
    if isIsolated, let isolation = isolationElsewhere(accepted) {
      // Isolated while the filters ran: what the actor added must run on it.
      handOff(accepted: origin, value, to: isolation, accepted)
      return true
    }
    deliverAccepted(value, from: origin, dead: &dead, accepted)
    return false
  }

  // Writes `value` into every member that receives, but the owned sinks and the origin, which
  // holds it. The change is delivered even when its origin left the chain meanwhile: it was made
  // while the origin was a member.
  @inlinable
  @inline(__always)
  final func deliverToMembers(
    _ members: MemberList.Borrowed, _ value: Value, from origin: Member, dead: inout DeadMembers
  ) {
    withUnsafePointer(to: value) { value in
      members.forEachMember { member in
        guard receivesChange(member, from: origin) else { return }
        write(at: value, to: member, dead: &dead)
      }
    }
  }

  // Whether a change from `origin` is written into `member`, a member but not an owned sink.
  @inlinable
  @inline(__always)
  final func receivesChange(_ member: Member, from origin: Member?) -> Bool {
    // The origin holds the value, unless another thread's delivery wrote it after the set that
    // made this change (Docs/Semantics.md, "Threading").
    if member === origin && !member.isOverwritten { return false }
    return member.role.receives && !member.isSink && member.takesDelivery && isActive
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
    _ sinks: ContiguousArray<Sink<Value>>?, with value: Value, dead: inout DeadMembers
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
    dead: inout DeadMembers
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
      if member.takesDelivery && isActive {
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

  // Whether `value` is what a tracked member read back after the delivery wrote into its path,
  // the value written: not a change, and neither queued nor traced.
  @usableFromInline
  @inline(never)
  final func isEchoRead(from origin: Member, _ value: Value, _ held: borrowing Held) -> Bool {
    guard let tracked = origin.tracked, tracked.isEchoRead else { return false }
    var read = value
    var written = current(held)
    return bindIsEqual(&read, &written)
  }

  // Queues a change `origin` made while the chain delivers. A change of `origin` still waiting
  // is replaced, and returned: the caller releases it after unlocking (Docs/Semantics.md, "Fair
  // delivery").
  @usableFromInline
  @inline(never)
  final func enqueue(
    origin: Member, value: Value, isWorkResult: Bool, _ held: borrowing Held
  ) -> Queued<Value>? {
    // Made on the delivering thread: from a sink, a setter or a conversion, or from work the
    // delivery runs (then it goes right after that work, in the order made). The delivery's
    // own, unless it is a change made off the chain's actor that this thread drained into the
    // delivery (`ChainIsolation.isDrainedHere`): another thread's, counted as one.
    let isHere = held.delivery.isDelivering(on: currentThreadID())
    let isOwn = isHere && !(isIsolated && ChainIsolation.isDrainedHere(origin))
    var change = PendingChange(origin: origin, value: value)
    change.isOwn = isOwn
    let extras = extrasMade(held)
    if isOwn { change.feedbackDepth = extras.deliveredDepth + 1 }
    if extras.queue == nil { extras.queue = PendingQueue() }
    var replaced: Queued<Value>?
    if isHere, let work = held.delivery.work {
      // The work's result goes before what its user code changed meanwhile.
      let later = isWorkResult || origin.isSendingRead ? extras.insertion ?? 0 : 0
      extras.insertion = (extras.insertion ?? 0) + 1
      if !work.isOwn { change.feedbackDepth = 0 }
      extras.queue?.appendToFront(.change(change), beforeLast: later)
    } else {
      // Only other threads' changes are replaced: this delivery's own keep their order, as
      // without contention (Docs/Semantics.md, "Re-entrancy").
      replaced = extras.queue?.append(.change(change), key: isOwn ? nil : .change(of: origin))
    }
    if replaced == nil {
      origin.pendingChanges.add(1, ordering: .relaxed)
      held.queuedCount += 1
    }
    return replaced
  }

  // Another thread delivers. `work` runs in the delivery's order; `key` names it while it waits
  // (`dropWork(key:)`).
  final func enqueue(work: @escaping () -> Void, key: PendingKey?, _ held: borrowing Held) {
    let extras = extrasMade(held)
    if extras.queue == nil { extras.queue = PendingQueue() }
    let replaced = extras.queue?.append(.work(work), key: key)
    precondition(replaced == nil, "Internal inconsistency: work queued twice with one key")
    held.queuedCount += 1
  }

  // The queue is not empty.
  private func dequeue(_ held: borrowing Held) -> Queued<Value> {
    guard let next = extrasMade(held).queue?.popFirst() else {
      preconditionFailure("Internal inconsistency: a chain's queue counted entries it did not hold")
    }
    held.queuedCount -= 1
    if case .change(let pending) = next {
      pending.origin.pendingChanges.subtract(1, ordering: .relaxed)
    }
    return next
  }

  // The initial sync of `member`, a new receiving member that deliveries skip until it is done
  // (its `pendingChanges` counts it, so no other thread writes it meanwhile). Done now, on this
  // thread, as its caller expects (Docs/Semantics.md, "Initial sync"); when another thread
  // delivers meanwhile, finished in the delivery's order, where it gets the latest value.
  // `rejoined`: the property is a member of this chain already (a join) and holds the chain's
  // value or a newer one of its own, on its way (`holdsItsLatest`): nothing is written off the
  // delivery, and the sync waits for what was queued before it, on the chain's actor too.
  // `rereads`: the member it replaces had a re-read waiting, which went with it.
  func syncNewMember(_ member: Member, rejoined: Bool, rereads: Bool) {
    SchedulePoint.reach()
    if rejoined {
      return serialize(toActor: true, workKey: .firstValue(of: member)) { [self] in
        finishSync(of: member, with: currentValue, rereads: rereads)
      }
    }
    let held = acquire()
    guard isActive else { return release(held) }
    let thread = currentThreadID()
    if !held.isDelivering || held.delivery.isDelivering(on: thread) {
      // No other thread delivers: written now, inside the delivery (taken when free).
      let takes = !held.isDelivering
      if takes { held.transition { $0.begin(on: thread) } }
      let value = current(held)
      release(held)
      finishSync(of: member, with: value)
      guard takes else { return }
      var dead = DeadMembers()
      finishDelivery(dead: &dead)
      return
    }
    let value = current(held)
    release(held)
    var dead = DeadMembers()
    if member.isAttached {
      member.tracked?.syncWrittenElsewhere()
      Member.syncedHere.set(Unretained(member).address)
      write(value, to: member, dead: &dead)
      Member.syncedHere.set(nil)
    }
    serialize(toActor: false, workKey: .firstValue(of: member)) { [self] in
      withUnsafePointer(to: value) { finishSync(of: member, with: currentValue, written: $0) }
    }
  }

  // `written`: the value the adding thread wrote, off the delivery (`syncNewMember`).
  private func finishSync(
    of member: Member, with value: Value, written: UnsafePointer<Value>? = nil,
    rereads: Bool = false
  ) {
    member.pendingChanges.subtract(1, ordering: .relaxed)
    guard member.isAttached else { return }
    if let tracked = member.tracked {
      let changed = tracked.syncFinished()
      // Set since the adding thread wrote it, or the chain's value still the one written, or
      // set before it rejoined: what the member reads is its newest value, sent unless it is
      // the chain's (a setter's correction too). Otherwise the chain's newer value is written
      // (Docs/Semantics.md, "Threading").
      if rereads { return tracked.readBack(member) }
      if let written {
        var first = written.pointee
        var latest = value
        if changed || bindIsEqual(&first, &latest) { return tracked.readBack(member) }
      }
    }
    // A change the member made since it was added waits in the queue, newer than the chain's value.
    guard member.takesDelivery else { return }
    var dead = DeadMembers()
    write(value, to: member, dead: &dead)
  }

  // Writes `value` into one member (a revert, or the initial sync of a new member).
  @usableFromInline
  final func write(_ value: Value, to member: Member, dead: inout DeadMembers) {
    withUnsafePointer(to: value) { write(at: $0, to: member, dead: &dead) }
  }

  // Writes the `Value` at `value` into `member`, unless it cannot receive; a member whose object
  // is gone goes into `dead`.
  @inlinable
  @inline(__always)
  final func write(at value: UnsafePointer<Value>, to member: Member, dead: inout DeadMembers) {
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
    // Here, not in the write: a check after the store made a `String` write copy its value.
    if _slowPath(member.echoHeld) { member.readBackHeldEcho() }
  }
}
