import Synchronization

// The actor a chain is isolated to, and the changes waiting to be delivered on it
// (Docs/Semantics.md, "Isolation").
//
// A chain gets one when something is added to it from an actor's isolation, and keeps it. A
// change made on that actor is delivered at once; a change made anywhere else is queued here, with
// its value, and one job on the actor delivers the queue in order. Swift has no public way to ask
// whether code runs on a given actor without trapping when it does not, so "on the actor" means:
// on the main queue, for the main actor (`MainQueue`, Platform.swift); inside this library's own
// delivery on it (a job of this kind, or a change made from its sinks or setters), for any
// other actor.
//
// @unchecked Sendable: `state` lives in its lock; `isDraining` is touched only on the actor.
@usableFromInline
final class ChainIsolation: @unchecked Sendable {
  // What to do with a change a member of an isolated chain made.
  @usableFromInline
  enum Admission: UInt8 {
    // The chain is not isolated: the caller checks for an echo and delivers.
    case nonisolated
    // Made on the actor: deliver it now (changes queued before it were delivered first).
    case now
    // Made elsewhere: queue it for the actor.
    case later
    // Made on the actor, but not a change: the chain's own write (an echo), or made stale by
    // delivering the changes queued before it (the member changed again meanwhile, and that
    // newer change was delivered).
    case dropped
  }

  // A change made off the actor (its member's value, captured, and the send), or other work for
  // the actor. The member counts it as pending until it runs: until then the chain leaves the
  // member's newer value alone (Docs/Semantics.md, "Re-entrancy").
  private struct Job {
    var origin: Member?
    var run: () -> Void
  }

  private struct State {
    // A member's job waiting is replaced by its newer one (Docs/Semantics.md, "Fair delivery").
    var jobs = PendingQueue<Job>()
    // A job of this chain's is on the actor's queue, or running: never more than one.
    var isScheduled = false
  }

  let name: String
  let isMain: Bool
  // Weak: a chain lives as long as its sending objects, and an actor may own them.
  private weak var actor: (any Actor)?
  // The actor's address, to recognise the thread draining its queue; compared only while the
  // drain holds the actor.
  private let actorAddress: UnsafeMutableRawPointer
  private let state = Locked(State())
  // Mirrors the number of queued jobs, so a change on the actor checks it without locking.
  private let queued = Atomic<Int>(0)
  @exclusivity(unchecked) private var isDraining = false

  // The actor whose queue this thread is delivering, for actors other than the main actor.
  private static let drainingActor = ThreadLocalPointer(.drainingActor)
  // The member whose change, made off the actor, this thread sends into the chain's delivery
  // under way here (a change made on the actor there drains what was queued before it).
  private static let drainedOrigin = ThreadLocalPointer(.drainedOrigin)

  // Whether the change `origin` sends now is one made off the actor, drained into the delivery
  // this thread runs: another thread's change, not one the delivery made (`ChainCore.enqueue`).
  static func isDrainedHere(_ origin: Member) -> Bool {
    drainedOrigin.value == Unretained(origin).address
  }

  init(_ actor: any Actor) {
    isMain = actor === MainActor.shared
    // Not for the main actor, which lives forever: a weak reference would give it a side table.
    self.actor = isMain ? nil : actor
    actorAddress = Unretained(actor as AnyObject).address
    name = Self.name(of: actor)
  }

  static func name(of actor: any Actor) -> String {
    actor === MainActor.shared ? "MainActor" : String(describing: type(of: actor))
  }

  // Whether `caller` is this actor. By reference, not address: a dead actor's address may be
  // reused by a new one.
  func isActor(_ caller: any Actor) -> Bool {
    isMain ? caller === MainActor.shared : actor.map { $0 === caller } ?? false
  }

  // Whether the actor (never the main actor) was deallocated.
  var isActorGone: Bool { !isMain && actor == nil }

  // Whether this thread runs on the actor now.
  var isCurrent: Bool {
    if isMain { return MainQueue.isCurrent }
    return Self.drainingActor.value == actorAddress
  }

  // The echo check comes after the actor check: `isWriting` is touched on the actor, and off it
  // only by the thread writing the member as the chain.
  // `clearingEcho`: a `@Bound` member's notification ends the chain's write (a setter that sets
  // again is a change); a control's events are ignored until the write returns.
  func admission(of origin: Member, clearingEcho: Bool) -> Admission {
    guard isCurrent else {
      // Off the actor, this thread may still write the member as the chain: a new member's
      // initial sync, added from nonisolated code, is written on the adding thread
      // (`ChainCore.syncNewMember`), delivering or not. No other thread writes the member then.
      guard origin.isSyncedHere || origin.chain.isDeliveringHere, origin.isWriting else {
        return .later
      }
      return echo(of: origin, clearingEcho: clearingEcho)
    }
    if origin.isWriting { return echo(of: origin, clearingEcho: clearingEcho) }
    origin.changesOnActor &+= 1
    if queued.load(ordering: .acquiring) > 0 && !isDraining {
      let changes = origin.changesOnActor
      origin.pendingChanges.add(1, ordering: .relaxed)
      drain(nested: true)
      origin.pendingChanges.subtract(1, ordering: .relaxed)
      if origin.changesOnActor != changes { return .dropped }
    }
    origin.isAdmittedHere = true
    return .now
  }

  // The notification of the chain's own write into `origin`: not a change.
  private func echo(of origin: Member, clearingEcho: Bool) -> Admission {
    if clearingEcho {
      origin.isWriting = false
      origin.markOverwritten()
    }
    return .dropped
  }

  // On the actor: delivers what is queued, so that work done now comes after it.
  func drainIfQueued() {
    if mustDrain { drain(nested: true) }
  }

  // On the actor: something is queued, and this actor is not delivering it already.
  var mustDrain: Bool { queued.load(ordering: .acquiring) > 0 && !isDraining }

  // Queues a change `origin` made off the actor, or other work for the actor, in `chain` (the
  // chain that owns this isolation); the first one of a batch schedules the job that delivers
  // them. A change of `origin` still waiting is replaced: it goes last, with the newer value.
  // Returns false when the actor is gone: the job was dropped, and the chain released.
  @usableFromInline
  @discardableResult
  func enqueue(from origin: Member?, in chain: AnyChain, _ job: @escaping () -> Void) -> Bool {
    enqueue(from: origin, in: chain, merging: nil) { job }
  }

  // The same for work `make` makes, under the lock, unless work queued with `key` waits: that one
  // goes last instead (a tracked member's re-read, which reads the latest). nil: nothing to queue.
  @discardableResult
  func enqueue(
    from origin: Member?, in chain: AnyChain, merging key: PendingKey?,
    _ make: () -> (() -> Void)?
  ) -> Bool {
    // The actor is loaded under the lock that marks a batch scheduled: the task that drains a
    // scheduled batch holds its actor, so a job queued behind it always runs.
    let outcome = state.withLock { state -> (Scheduling, replaced: Job?) in
      var actor: (any Actor)?
      if !state.isScheduled && !isMain {
        actor = self.actor
        if actor == nil { return (.actorGone, nil) }
      }
      if let key, state.jobs.moveToBack(key: key) { return (.queued, nil) }
      guard let job = make() else { return (.queued, nil) }
      let replaced = state.jobs.append(
        Job(origin: origin, run: job), key: key ?? origin.map { .change(of: $0) })
      if replaced == nil {
        origin?.pendingChanges.add(1, ordering: .relaxed)
        queued.add(1, ordering: .releasing)
      }
      if state.isScheduled { return (.queued, replaced) }
      state.isScheduled = true
      return (.schedule(actor), replaced)
    }
    // What it captured is released after unlocking.
    withExtendedLifetime(outcome.replaced) {}
    switch outcome.0 {
    case .queued:
      return true
    case .schedule(let actor):
      schedule(on: actor)
      return true
    case .actorGone:
      // The actor is gone, and with it what it isolated: the chain goes too. Nothing else is
      // queued: a batch not scheduled was drained.
      chain.registry.release(chain, as: .actorGone)
      return false
    }
  }

  private enum Scheduling {
    case queued
    // The first job of a batch: drain on this actor (nil: the main actor).
    case schedule((any Actor)?)
    // Not queued.
    case actorGone
  }

  // Queues the change a `@Bound` member made off its chain's actor, with its value. Out of line:
  // the closure it builds would make every change retain what it captures.
  @usableFromInline
  @inline(never)
  static func enqueue<Value>(_ value: Value, from member: Member) {
    SchedulePoint.reach()
    member.chain.isolation?.enqueue(from: member, in: member.chain) {
      guard let send = member.send else { return }
      withUnsafePointer(to: value) { send(nil, $0, member) }
    }
  }

  // Puts the chain's one job on the actor's queue (nil: the main actor).
  private func schedule(on actor: (any Actor)?) {
    if let actor {
      Task { await Self.runJob(self, on: actor) }
    } else {
      Task { @MainActor in self.runJob(on: nil) }
    }
  }

  private static func runJob(_ isolation: ChainIsolation, on actor: isolated any Actor) {
    isolation.runJob(on: actor)
  }

  // The chain's job on its actor: delivers what was queued when it began, then returns, and
  // leaves what came meanwhile to the next job, behind the actor's other work: a producer on
  // another thread never holds the actor for more than one job (Docs/Semantics.md, "Fair
  // delivery").
  private func runJob(on actor: (any Actor)?) {
    drain(nested: false)
    let isScheduledAgain = state.withLock { state -> Bool in
      state.isScheduled = !state.jobs.isEmpty
      return state.isScheduled
    }
    if isScheduledAgain { schedule(on: actor) }
  }

  // On the actor: runs, in order, the jobs queued when it began (changes queued before one made
  // on the actor, or the job's share). `nested`: called by code on the actor, which may run
  // inside the chain's delivery; a change drained there is queued as another thread's, so that
  // the delivery's call returns without it and counts no feedback for it (Docs/Semantics.md,
  // "Fair delivery").
  private func drain(nested: Bool) {
    let outer = Self.drainingActor.value
    Self.drainingActor.set(actorAddress)
    isDraining = true
    defer {
      isDraining = false
      Self.drainingActor.set(outer)
    }
    var share = pendingCount
    while share > 0, let job = takeNext() {
      share -= 1
      job.origin?.pendingChanges.subtract(1, ordering: .relaxed)
      if nested, let origin = job.origin, origin.chain.isDeliveringHere {
        let outerOrigin = Self.drainedOrigin.value
        Self.drainedOrigin.set(Unretained(origin).address)
        defer { Self.drainedOrigin.set(outerOrigin) }
        job.run()
      } else {
        job.run()
      }
    }
  }

  // The next queued change, moved out of the queue: what it captured is released by the caller,
  // after unlocking.
  private func takeNext() -> Job? {
    state.withLock { state -> Job? in
      guard let job = state.jobs.popFirst() else { return nil }
      queued.subtract(1, ordering: .relaxed)
      return job
    }
  }

  // How many jobs wait for the actor (Bind+Testing.swift).
  var pendingCount: Int { state.withLock { $0.jobs.count } }

  // No job of the chain's waits for the actor, or runs on it.
  var isIdle: Bool { state.withLock { $0.jobs.isEmpty && !$0.isScheduled } }
}
