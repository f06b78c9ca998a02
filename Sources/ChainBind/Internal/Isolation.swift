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
  // A change made off the actor (its member's value, captured, and the send), or an error
  // report. The member counts it as pending until it runs: until then the chain leaves the
  // member's newer value alone (Docs/Semantics.md, "Re-entrancy").
  private struct Job {
    var origin: Member?
    var run: () -> Void
  }

  private struct State {
    var jobs: ContiguousArray<Job> = []
    var next = 0
    var isScheduled = false
  }

  let name: String
  // The actor's address: its identity, compared with other isolations and the draining thread's.
  let actorAddress: UnsafeMutableRawPointer
  private let isMain: Bool
  // Weak: a chain lives as long as its sending objects, and an actor may own them.
  private weak var actor: (any Actor)?
  private let state = Locked(State())
  // Mirrors the number of queued jobs, so a change on the actor checks it without locking.
  private let queued = Atomic<Int>(0)
  @exclusivity(unchecked) private var isDraining = false

  // The actor whose queue this thread is delivering, for actors other than the main actor.
  private static let drainingActor = ThreadLocalPointer()

  init(_ actor: any Actor) {
    self.actor = actor
    actorAddress = Unmanaged.passUnretained(actor as AnyObject).toOpaque()
    isMain = actor === MainActor.shared
    name = Self.name(of: actor)
  }

  static func name(of actor: any Actor) -> String {
    actor === MainActor.shared ? "MainActor" : String(describing: type(of: actor))
  }

  // Whether a change `origin` made now may be delivered on this thread. Changes queued before
  // it are delivered first (in order), without overwriting `origin`, whose change is newer.
  func admitsChange(from origin: Member) -> Bool {
    guard isCurrent else { return false }
    if queued.load(ordering: .acquiring) > 0 && !isDraining {
      origin.pendingChanges.add(1, ordering: .relaxed)
      drain()
      origin.pendingChanges.subtract(1, ordering: .relaxed)
    }
    return true
  }

  // Whether this thread runs on the actor now.
  var isCurrent: Bool {
    if isMain { return MainQueue.isCurrent }
    return Self.drainingActor.value == actorAddress
  }

  // Queues a change `origin` made off the actor, or other work for the actor; the first one of
  // a batch schedules the job that delivers them.
  @usableFromInline
  func enqueue(from origin: Member?, _ job: @escaping () -> Void) {
    origin?.pendingChanges.add(1, ordering: .relaxed)
    let schedule = state.withLock { state -> Bool in
      state.jobs.append(Job(origin: origin, run: job))
      queued.add(1, ordering: .releasing)
      defer { state.isScheduled = true }
      return !state.isScheduled
    }
    guard schedule else { return }
    if isMain {
      Task { @MainActor in self.drain() }
    } else if let actor {
      Task { await Self.drain(self, on: actor) }
    } else {
      // The actor is gone, and with it what it isolated: nothing is left to deliver to.
      dropQueue()
    }
  }

  // Queues the change a `@Bound` member made off its chain's actor, with its value. Out of line:
  // the closure it builds would make every change retain what it captures.
  @usableFromInline
  @inline(never)
  static func enqueue<Value>(_ value: Value, from member: Member) {
    member.chain.isolation?.enqueue(from: member) {
      guard let send = member.send else { return }
      withUnsafePointer(to: value) { send(nil, $0, member) }
    }
  }

  private static func drain(_ isolation: ChainIsolation, on actor: isolated any Actor) {
    isolation.drain()
  }

  // On the actor: runs the queued changes in order, including those queued meanwhile.
  private func drain() {
    let outer = Self.drainingActor.value
    Self.drainingActor.set(actorAddress)
    isDraining = true
    defer {
      isDraining = false
      Self.drainingActor.set(outer)
    }
    while let job = takeNext() {
      job.origin?.pendingChanges.subtract(1, ordering: .relaxed)
      job.run()
    }
  }

  // The next queued change, moved out of the queue: what it captured is released by the caller,
  // after unlocking.
  private func takeNext() -> Job? {
    state.withLock { state -> Job? in
      guard state.next < state.jobs.count else {
        // Only no-op closures are left in the array: releasing them runs no user code.
        state.jobs.removeAll(keepingCapacity: false)
        state.next = 0
        state.isScheduled = false
        return nil
      }
      var job = Job(origin: nil, run: {})
      swap(&job, &state.jobs[state.next])
      state.next += 1
      queued.subtract(1, ordering: .relaxed)
      return job
    }
  }

  private func dropQueue() {
    let dropped = state.withLock { state -> ContiguousArray<Job> in
      defer { state = State() }
      queued.store(0, ordering: .relaxed)
      return state.jobs
    }
    for job in dropped { job.origin?.pendingChanges.subtract(1, ordering: .relaxed) }
  }
}
