import Synchronization

// Entry points for ChainBind's own tests, out of the public API: `@_spi(Testing) import ChainBind`.

/// A registry of chains of its own, so that a test's counts stay exact while other tests bind.
///
/// ```swift
/// let registry = ScopedRegistry()
/// registry.withScope { Bind.inout(model, \.int) }
/// registry.activeChainCount   // 1
/// ```
@_spi(Testing)
public final class ScopedRegistry: Sendable {
  let registry = Registry()

  /// Creates an empty registry.
  public init() {}

  /// The number of chains alive in this registry.
  public var activeChainCount: Int { registry.activeChainCount }

  /// How many shards the registry keeps its memberships in, by object: members share an access
  /// per call site in each shard, and each shard keeps its own idle accesses.
  public static var shardCount: Int { Registry.shardCount }

  /// How many accesses (a key path and the closures built for it) the members bound in this
  /// registry share: one per call site, chain type and conversion, when no closure of the
  /// caller's is involved.
  public var sharedAccessCount: Int { registry.sharedAccessCount }

  /// Runs `body` with this registry in place of the process-wide one, on this task or thread.
  ///
  /// - Parameter body: The code that binds and unbinds.
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws.
  public func withScope<Result>(_ body: () throws -> Result) rethrows -> Result {
    Registry.openScopes.add(1, ordering: .relaxed)
    defer { Registry.openScopes.subtract(1, ordering: .relaxed) }
    return try Registry.$scoped.withValue(registry, operation: body)
  }
}

extension Chain {
  /// The members the chain holds right now, without pruning dead ones first.
  @_spi(Testing)
  public var attachedMemberCount: Int { core.snapshotMembers().count }

  /// How many of its members a registry's sweep finds dead only by loading their objects: those
  /// whose end no token of their own object, nor a control's events, reports.
  @_spi(Testing)
  public var membersSweptByObject: Int {
    core.snapshotMembers().filter {
      $0.isAttached && !$0.isEndedByItsObject && !$0.endsWithItsObject(orUnread: true)
    }.count
  }

  /// How many members left the chain during the delivery in progress, kept alive until it ends
  /// (the delivery reads the members without retaining them).
  @_spi(Testing)
  public var membersKeptForDelivery: Int {
    core.withLock { held in held.extras?.retired.count ?? 0 }
  }

  /// Whether the chain's lock is held right now (by another thread, or by the caller's stack).
  @_spi(Testing)
  public var isLocked: Bool {
    guard let held = core.tryAcquire() else { return true }
    core.release(held)
    return false
  }

  /// How many changes and other work wait for the chain's delivery.
  ///
  /// They wait in its queue, and for its actor. Bounded by its members and sinks, however many
  /// changes are made meanwhile.
  @_spi(Testing)
  public var pendingCount: Int { core.pendingCount }

  /// Whether no thread delivers the chain and nothing waits for its delivery (a relay, or a job
  /// for its actor, included).
  @_spi(Testing)
  public var isIdle: Bool { core.isIdle }

  /// How many list changes the chain computed for its list sinks, which share them; nil before
  /// a list sink is added.
  @_spi(Testing)
  public var listChangesComputed: Int? { core.listChangesComputed }
}

extension Chain {
  /// The object that holds the chain's state, for a test to reference weakly: it goes when the
  /// chain is released and no `Chain` value refers to it.
  @_spi(Testing)
  public var stateObject: AnyObject { core }

  /// The chain's current value: the last change it accepted.
  @_spi(Testing)
  public var currentValue: Value { core.currentValue }
}

extension Bind {
  /// Runs `body` with `scheduler` called at ChainBind's schedule points.
  ///
  /// The points: a change on its way into a chain, before the chain's lock (or, made off the
  /// chain's actor, before it is queued for the actor); work for a delivery; a new member's
  /// initial sync; a dying `@Bound` property's token, before it tells the tracked members that
  /// read the property, and each such member once it stopped observing the token; on whichever
  /// thread reaches them. One scheduler at a time: not nested,
  /// not concurrently.
  ///
  /// A test's scheduler lets one thread at a time go on from these points (and from points of
  /// its own in its user code), and so can run every interleaving of a few threads' steps.
  ///
  /// ```swift
  /// Bind.withSchedulePoints({ explorer.point() }) { explorer.run(threads) }
  /// ```
  ///
  /// - Parameters:
  ///   - scheduler: Called at each point; it returns when the thread may go on.
  ///   - holdsRelay: Whether a relay started on this thread (what a call leaves for another
  ///     thread to deliver, Docs/Semantics.md, "Fair delivery") waits for ``runHeldRelays()``
  ///     instead of running on a thread of its own; nil: none does. Other tests' threads must
  ///     answer false, or their relays wait for this test.
  ///   - underLock: Called at a membership's end, between its chain's (when it was the last
  ///     sender) and its own, on a thread that holds a lock of the registry meanwhile: a thread
  ///     it waits for must not need that lock first. A scheduler that lets one thread at a time
  ///     go on leaves it nil.
  ///   - body: The code during which the scheduler is installed.
  /// - Returns: What `body` returns.
  @_spi(Testing)
  public static func withSchedulePoints<Result>(
    _ scheduler: @escaping @Sendable () -> Void,
    holdingRelays holdsRelay: (@Sendable () -> Bool)? = nil,
    underLock: (@Sendable () -> Void)? = nil, _ body: () -> Result
  ) -> Result {
    SchedulePoint.install(
      SchedulePoint.Scheduler(scheduler), underLock: underLock.map(SchedulePoint.Scheduler.init))
    openBatches.add(1, ordering: .relaxed)
    SchedulePoint.isInstalled.store(true, ordering: .releasing)
    Relay.hold(holdsRelay.map(Relay.Holder.init))
    let result = body()
    Relay.hold(nil)
    SchedulePoint.isInstalled.store(false, ordering: .releasing)
    openBatches.subtract(1, ordering: .relaxed)
    SchedulePoint.install(nil)
    return result
  }
}

extension Bind {
  /// Runs, on this thread, the relays held while schedule points are installed
  /// (``withSchedulePoints(_:holdingRelays:underLock:_:)``), and those they start, until none is left.
  ///
  /// ```swift
  /// explorer.run(threads); Bind.runHeldRelays(); check()
  /// ```
  @_spi(Testing)
  public static func runHeldRelays() { Relay.runHeld() }
}

extension Bind {
  /// Runs `body` with the lines ChainBind writes to standard error on this task (the default
  /// fallback error handler's reports, `trace()`'s events) handed to `capture` instead.
  ///
  /// Other tasks and threads still write to standard error, so tests that run in parallel keep
  /// their output apart.
  ///
  /// ```swift
  /// Bind.withStandardErrorCaptured({ line in lines.append(line) }) {
  ///   field.userTypes("12a")   // lines: ["ChainBind: chain Model.int#4, member ...: cannot convert ..."]
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - capture: Called with each line, without its line feed.
  ///   - body: The code whose lines to capture.
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws.
  @_spi(Testing)
  public static func withStandardErrorCaptured<Result>(
    _ capture: @escaping @Sendable (String) -> Void, _ body: () throws -> Result
  ) rethrows -> Result {
    StandardErrorCapture.openCount.add(1, ordering: .relaxed)
    defer { StandardErrorCapture.openCount.subtract(1, ordering: .relaxed) }
    return try StandardErrorCapture.$current.withValue(
      StandardErrorCapture(capture), operation: body)
  }
}

// A test's capture of this task's standard error (`Bind.withStandardErrorCaptured`). A class of
// its own holds the closure, as every closure kept process-wide (Docs/Architecture.md, "Locks").
final class StandardErrorCapture: Sendable {
  @TaskLocal static var current: StandardErrorCapture?
  // How many captures are open, in every task: a write looks the task-local value up only while
  // this is not zero.
  static let openCount = Atomic<Int>(0)

  let write: @Sendable (String) -> Void

  init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }
}
