@_spi(Testing) import ChainBind
import Dispatch
import Foundation

/// Runs a few threads' steps in every order, one thread at a time: a small model checker, in the
/// manner of Rust's loom, over ChainBind's own code.
///
/// Each thread runs until it reaches a schedule point: ChainBind's (a change on its way into a
/// chain or its actor's queue, work for a delivery, a new member's initial sync, a dying token;
/// `Bind.withSchedulePoints`) or one the scenario puts in its user code (`point()` in a getter, a
/// setter, a sink). There the explorer picks which thread goes on. Every other thread is stopped
/// at a point meanwhile, and ChainBind holds none of its locks at one, so a run is deterministic
/// for a given sequence of picks (except for Observation's order, `explore(limit:varies:_:)`).
/// The explorer runs the scenario again for each sequence, depth first, until it has run them
/// all; each replay must let the same threads go on at each step, each stopped at the same place
/// (its call stack), as the run it replays. A
/// scenario must not hold a lock of its own across code that may reach a point (a release may
/// run a token's deinit): a thread stopped there would block the others, which the explorer
/// reports as a deadlock.
final class Explorer: @unchecked Sendable {
  /// What one run of the scenario found wrong, with the picks that led there.
  struct Failure: CustomStringConvertible {
    let schedule: [Int]
    let problem: String
    var description: String { "schedule \(schedule): \(problem)" }
  }

  private let lock = NSLock()
  // Guarded by `lock`: the thread of each worker of the run in progress, what lets each go on,
  // and where each is stopped (`place()`; 0 before its start).
  private var workers: [UInt: Int] = [:]
  private var goes: [DispatchSemaphore] = []
  private var places: [Int] = []
  private let arrived = DispatchSemaphore(value: 0)

  /// The number of runs, one per schedule.
  private(set) var runs = 0

  /// How many steps each thread of the last run took.
  ///
  /// A step is a pick to go on, its start included. A scenario's check reads it to prove
  /// progress: a thread's call returns within a bounded number of its own steps, whatever the
  /// others do.
  private(set) var steps: [Int] = []

  /// How many runs let other threads go on than the run they replayed, or stopped them at other
  /// places, at some step, or ended sooner (`explore(limit:varies:_:)`).
  private(set) var divergences = 0

  /// How many times the exploration took the order a replay met instead of the one it replayed
  /// (`explore(limit:varies:_:)`): below each such step, schedules of the first order may not
  /// have run.
  private(set) var switches = 0

  /// How many times in a row the explorer runs the same picks again while they take another
  /// order, before it follows that order.
  static let replayTries = 10

  /// Runs `scenario` once per schedule of its threads' steps.
  ///
  /// - Parameters:
  ///   - limit: The most schedules to run; the exploration stops there, and `isExhausted` says
  ///     whether it had run them all.
  ///   - varies: Whether the threads make choices the explorer does not pick. Observation calls
  ///     the watches a change fires in the order of its hash tables, which are seeded per
  ///     instance: with two watches armed, the same picks may take another order in another run.
  ///     Such a run is checked like any other (it is a real order), and counted in
  ///     `divergences`; then the same picks run again, until a run replays them or
  ///     `replayTries` runs did not: then the exploration follows the order met last from that
  ///     step (`switches`), and schedules of the other order below it may not run. Otherwise a
  ///     replay that differs is a failure: ChainBind's own steps are the same for the same picks.
  ///   - scenario: Sets up a fresh state on the calling thread and returns the threads' bodies
  ///     and the check to run once all of them finished (nil when the state is right, otherwise
  ///     what is wrong).
  /// - Returns: The first failure, or nil, and whether every schedule was run.
  func explore(
    limit: Int, varies: Bool = false,
    _ scenario: () -> (threads: [@Sendable () -> Void], check: () -> String?)
  ) -> (failure: Failure?, isExhausted: Bool) {
    // The picks of the run in progress: which thread, among those that could go on.
    var picks: [Pick] = []
    var tries = 0
    let explorerThread = currentThreadNumber()
    // The relays of this exploration's threads wait for the end of each run; other tests' run.
    let isExplored: @Sendable () -> Bool = { [self] in
      let thread = currentThreadNumber()
      return thread == explorerThread || lock.withLock { workers[thread] != nil }
    }
    return Bind.withSchedulePoints({ [self] in point() }, holdingRelays: isExplored) {
      while runs < limit {
        runs += 1
        let (threads, check) = scenario()
        var divergence: (step: Int, ready: [Int], at: [Int])?
        if let problem = run(threads, replaying: &picks, varies: varies, divergence: &divergence)
          ?? check()
        {
          let order = divergence.map { " (in another order from step \($0.step) on)" }
          return (Failure(schedule: picks.map(\.taken), problem: problem + (order ?? "")), false)
        }
        if let divergence {
          divergences += 1
          tries += 1
          if tries < Self.replayTries { continue }
          tries = 0
          switches += 1
          let step = divergence.step
          if divergence.ready.isEmpty {
            // It ended sooner: a whole run of the picks before `step`.
            picks.removeSubrange(step...)
          } else {
            let taken = min(picks[step].taken, divergence.ready.count - 1)
            picks.removeSubrange(step...)
            picks.append(Pick(taken: taken, ready: divergence.ready, at: divergence.at))
            continue
          }
        }
        tries = 0
        // The next schedule: the last pick that has an alternative left takes it.
        while let last = picks.last, last.taken + 1 >= last.ready.count { picks.removeLast() }
        guard !picks.isEmpty else { return (nil, true) }
        picks[picks.count - 1].taken += 1
      }
      return (nil, false)
    }
  }

  /// A schedule point in a scenario's user code: on a worker, waits until the explorer picks it
  /// again; on any other thread, returns at once.
  func point() {
    let worker = lock.withLock { workers[currentThreadNumber()] }
    guard let worker else { return }
    let place = Self.place()
    let go = lock.withLock {
      places[worker] = place
      return goes[worker]
    }
    arrived.signal()
    go.wait()
  }

  // Where this thread is: its call stack's return addresses, hashed (the same code reached the
  // same way in every run of this process).
  private static func place() -> Int {
    var hasher = Hasher()
    for address in Thread.callStackReturnAddresses { hasher.combine(address.uintValue) }
    return hasher.finalize()
  }

  // Which thread a step took, by its index among those that could go on, and where those were.
  private struct Pick {
    var taken: Int
    let ready: [Int]
    let at: [Int]
  }

  // One run: picks in `picks` are replayed, then the first thread that may go on is picked, and
  // the pick is recorded. Returns what went wrong with the run itself, if anything. Where the
  // run lets other threads go on than `picks` say, or ends sooner (`varies`), it says where, and
  // which threads could go on (none: it ended); from there it takes the first, recording nothing.
  private func run(
    _ threads: [@Sendable () -> Void], replaying picks: inout [Pick], varies: Bool,
    divergence: inout (step: Int, ready: [Int], at: [Int])?
  ) -> String? {
    let goes = threads.map { _ in DispatchSemaphore(value: 0) }
    lock.withLock {
      workers = [:]
      self.goes = goes
      places = Array(repeating: 0, count: threads.count)
    }
    let finished = LockedBox(Array(repeating: false, count: threads.count))
    // Joined before the run ends: nothing of one run (a thread, what its closures hold) is
    // released while the next one runs. Not after a failed run: a thread may be stopped for good.
    var started: [WorkerThread] = []
    var failed = true
    defer { if !failed { for thread in started { thread.join() } } }
    for (index, body) in threads.enumerated() {
      started.append(
        WorkerThread { [self] in
          lock.withLock { workers[currentThreadNumber()] = index }
          arrived.signal()
          goes[index].wait()
          body()
          lock.withLock { workers[currentThreadNumber()] = nil }
          finished.withLock { $0[index] = true }
          arrived.signal()
        })
    }
    for _ in threads { arrived.wait() }
    var step = 0
    steps = Array(repeating: 0, count: threads.count)
    while true {
      let ready = finished.withLock { done in done.indices.filter { !done[$0] } }
      if ready.isEmpty { break }
      let at = lock.withLock { ready.map { places[$0] } }
      let differs = step < picks.count && (picks[step].ready != ready || picks[step].at != at)
      if divergence == nil, differs {
        guard varies else {
          let places = picks[step].ready == ready ? ", stopped at other places" : ""
          return "step \(step): threads \(ready) could go on\(places), \(picks[step].ready) before"
        }
        divergence = (step, ready, at)
      }
      let taken: Int
      if divergence != nil {
        taken = 0
      } else if step < picks.count {
        taken = picks[step].taken
      } else {
        picks.append(Pick(taken: 0, ready: ready, at: at))
        taken = 0
      }
      step += 1
      steps[ready[taken]] += 1
      goes[ready[taken]].signal()
      // A thread that never reaches a point nor finishes waits for one that is stopped: a
      // deadlock the protocol must not have. Reported, not waited for forever.
      guard arrived.wait(timeout: .now() + .seconds(20)) == .success else {
        return "step \(step): a thread neither reached a point nor finished (deadlock)"
      }
    }
    lock.withLock { workers = [:] }
    // What the threads' calls left to relays, delivered now, on this thread.
    Bind.runHeldRelays()
    if divergence == nil, step < picks.count {
      guard varies else {
        return "ran \(step) steps where the same picks ran \(picks.count) before"
      }
      divergence = (step, [], [])
    }
    failed = false
    return nil
  }
}

/// This thread's identity, for a scheduler to tell threads apart.
func currentThreadNumber() -> UInt {
  #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
  #else
    UInt(pthread_self())
  #endif
}

/// A thread that can be joined (Foundation's `Thread` cannot).
private final class WorkerThread: @unchecked Sendable {
  #if canImport(Darwin)
    private var thread: pthread_t?
  #else
    private var thread = pthread_t()
  #endif

  init(_ body: @escaping @Sendable () -> Void) {
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(
      &thread, nil,
      { context in
        let context: UnsafeMutableRawPointer? = context
        guard let context else { return nil }
        Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        return nil
      }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
  }

  func join() {
    #if canImport(Darwin)
      guard let thread else { return }
    #endif
    pthread_join(thread, nil)
  }

  private final class Box {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
}
