import Synchronization

#if os(Linux)
  // The didSet form of withObservationTracking (Docs/Semantics.md, "Tracked sources").
  @_spi(SwiftUI) import Observation
#else
  import Observation
#endif

// Tracked sources (Docs/Semantics.md, "Tracked sources"): a sending member whose key path reads
// @Bound properties other than its own one-step property (a nested path, a computed property)
// observes every @Bound property the read touched. A change of any of them makes the member read
// its key path again, on the changing thread, collecting the properties anew, and send the value
// when it differs from the one it last read.

// Collects the @Bound properties one read touches, on the reading thread. The getters report to
// it through `BoundProbe` (BoundToken.swift), which the same thread-local pointer reaches.
final class DependencyCollector {
  @exclusivity(unchecked) private(set) var tokens: [BoundToken] = []
  // The tracked member reading: it observes each property as the read reaches it, before the
  // value is read, so that a change made at any moment after that leads to a re-read
  // (Docs/Semantics.md, "Tracked sources").
  // Unowned: the reader holds it for the read, and it is not retained for each one.
  private unowned(unsafe) let source: TrackedSource?
  // What `source` observed after its last read: those need no new observation. Addresses only:
  // never used as references.
  private let observed: ContiguousArray<Unretained<BoundToken>>

  init(source: TrackedSource? = nil) {
    self.source = source
    observed = source?.lastObserved ?? []
  }

  // A @Bound property was read: observe it through its storage's token. Returns the token to
  // install when the storage has none.
  func visit(_ existing: BoundToken?) -> BoundToken? {
    let token = existing ?? BoundToken()
    if !tokens.contains(where: { $0 === token }) {
      tokens.append(token)
      // By address, unretained: a token observed before may have died meanwhile (then one at
      // the same address is observed by the read's `observe`, a little later).
      if let source, !observed.contains(where: { $0.refers(to: token) }) {
        source.observeNow(token)
      }
    }
    return existing == nil ? token : nil
  }
}

// What a tracked member observes, and the value it last read. Not generic: what depends on the
// member's types is in `reread`.
//
// The tokens it observes are held unretained, so that they die with their objects (objects along
// a path are not kept, Docs/Semantics.md, "Tracked sources") and get no side table a weak
// reference would give them, which slows every retain of a token. They are touched only under
// `state`'s lock, and a dying token takes that lock (`tokenEnded`) before its memory goes.
//
// @unchecked Sendable: `state` lives in its lock; the rest is fixed at creation.
final class TrackedSource: @unchecked Sendable {
  private struct State {
    var dependencies: ContiguousArray<Unretained<BoundToken>> = []
    // Cleared when the membership ends (a notification under way may outlive it). Not weak: a
    // weak reference gives the member a side table, which slows every retain of it.
    var member: Member?
  }

  private let state: Locked<State>
  // Counts this source's reads under Observation (ObservationTicket).
  let readGeneration = Atomic<Int>(0)
  // A re-read waits in the chain's delivery: another change merges into it (it reads the latest).
  private let isRereadQueued = Atomic<Bool>(false)
  // Set by the delivering thread while it reads the path back after writing it (an echo).
  @exclusivity(unchecked) var isEchoRead = false

  var member: Member? { state.withLock { $0.member } }
  // What the last read observed, for the next read (`DependencyCollector`): reads are one at a
  // time, inside the chain's delivery, so only the reading thread touches it.
  @exclusivity(unchecked) private(set) var lastObserved: ContiguousArray<Unretained<BoundToken>> =
    []
  // Reads the member's key path again, collecting its dependencies; sends the value when it
  // differs from the last one and `sending` is true. Returns the tokens read.
  private let reread: (TrackedSource, Member, _ sending: Bool) -> [BoundToken]?

  init(member: Member, reread: @escaping (TrackedSource, Member, Bool) -> [BoundToken]?) {
    state = Locked(State(member: member))
    self.reread = reread
  }

  // Observes `tokens` (alive: the caller holds them) and stops observing the rest. Lock order:
  // this source's lock, then a token's. A token in `dependencies` may be in its deinit, waiting
  // in `tokenEnded` for this lock: it is compared by address and used without a retain.
  func observe(_ tokens: [BoundToken]) {
    if !Self.same(lastObserved, tokens) {
      lastObserved = ContiguousArray(tokens.map { Unretained($0) })
    }
    state.withLock { state in
      guard state.member != nil else { return }
      let old = state.dependencies
      if Self.same(old, tokens) { return }  // the same properties as last time: nothing to change
      for dependency in old where !tokens.contains(where: { dependency.refers(to: $0) }) {
        dependency.with { $0.removeObserver(self) }
      }
      for token in tokens
      where !old.contains(where: { $0.refers(to: token) }) {
        token.addObserver(self)
      }
      state.dependencies = ContiguousArray(tokens.map { Unretained($0) })
    }
  }

  // Whether `observed` are `tokens`, in order, by address.
  private static func same(
    _ observed: ContiguousArray<Unretained<BoundToken>>, _ tokens: [BoundToken]
  ) -> Bool {
    observed.count == tokens.count
      && zip(observed, tokens).allSatisfy { $0.refers(to: $1) }
  }

  // The read in progress reached `token` (alive: the collector holds it): observe it now. The
  // read's `observe` keeps it, or stops observing it when the read did not use it after all.
  func observeNow(_ token: BoundToken) {
    state.withLock { state in
      guard state.member != nil, !state.dependencies.contains(where: { $0.refers(to: token) })
      else { return }
      token.addObserver(self)
      state.dependencies.append(Unretained(token))
    }
  }

  // The membership ended: stop observing. Registry lock held; takes token locks only.
  // The member is released by the registry's caller, after unlocking: the registry still holds it.
  func end() {
    state.withLock { state in
      state.member = nil
      for dependency in state.dependencies {
        dependency.with { $0.removeObserver(self) }
      }
      state.dependencies = []
    }
  }

  // One of the observed properties was set, on this thread.
  func dependencyChanged() {
    guard let member, member.isAttached else { return }
    // In a batch on this thread: re-read once, when it ends (Batch.swift).
    if openBatches.load(ordering: .relaxed) > 0, let batch = Batch.openHere {
      return batch.with { $0.reread(self) }
    }
    // The re-read is part of the chain's delivery: one at a time with its other changes, so the
    // last value delivered is read after the last change (Docs/Semantics.md, "Threading").
    // Re-reads waiting for this member merge into one.
    member.chain.serialize(
      toActor: true, now: { isDeliveringHere in reread(member, isDeliveringHere) },
      later: {
        guard !isRereadQueued.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
        return {
          self.isRereadQueued.store(false, ordering: .releasing)
          self.reread(member, false)
        }
      })
  }

  private func reread(_ member: Member, _ isDeliveringHere: Bool) {
    // The chain writing through the member's own path, on this thread: its first notification
    // is not a change (no echo), but the value and the properties read are refreshed. As for a
    // one-step member, a setter that sets again (a clamp) is a change. The same property set
    // meanwhile by another thread is a change (Docs/Semantics.md, "Re-entrancy").
    if isDeliveringHere && member.isWriting {
      member.isWriting = false
      // Sent only when it is not what the delivery wrote: another thread may have changed the
      // path since (ChainCore.enqueue).
      isEchoRead = true
      read(member, sending: true)
      isEchoRead = false
    } else {
      read(member, sending: true)
    }
  }

  // Reads the member's key path again, observing what it reads; sends the value when it differs
  // from the last one and `sending`. Inside the chain's delivery.
  func read(_ member: Member, sending: Bool) {
    guard member.isAttached else { return }
    guard let tokens = reread(self, member, sending) else {
      // The member's own object is gone: so is its membership (Docs/Semantics.md, "Lifetime").
      if member.object == nil { member.chain.registry.detach(member) }
      return
    }
    observe(tokens)
  }

  // An observed token is being deallocated, with its object. When that object was the member's
  // own, the membership ends with it (Docs/Semantics.md, "Lifetime").
  func tokenEnded(_ token: BoundToken) {
    state.withLock { state in state.dependencies.removeAll { $0.refers(to: token) } }
    endIfObjectGone()
  }

  // Something the member observed went with its object: when the member's own object is gone
  // too, so is the membership (Docs/Semantics.md, "Lifetime").
  func endIfObjectGone() {
    guard let member else { return }
    if member.object == nil, member.isAttached { member.chain.registry.detach(member) }
  }
}

extension BoundToken {
  func addObserver(_ source: TrackedSource) {
    let held = acquire()
    let count = held.updateObservers { observers in
      observers.append(source)
      return observers.count
    }
    observerCount.store(Int32(count), ordering: .relaxed)
    release(held)
  }

  func removeObserver(_ source: TrackedSource) {
    let held = acquire()
    var removed: TrackedSource?
    let count = held.updateObservers { observers in
      if let index = observers.firstIndex(where: { $0 === source }) {
        removed = observers.remove(at: index)
      }
      return observers.count
    }
    observerCount.store(Int32(count), ordering: .relaxed)
    release(held)
    withExtendedLifetime(removed) {}
  }

  // Out of line: a set of a property no tracked member observes pays one relaxed load.
  @usableFromInline
  @inline(never)
  func notifyObservers() {
    let held = acquire()
    let current = held.observers
    release(held)
    for source in current { source.dependencyChanged() }
  }

  func observersEnded() {
    let held = acquire()
    let current = held.updateObservers { observers in
      defer { observers = [] }
      return observers
    }
    observerCount.store(0, ordering: .relaxed)
    release(held)
    SchedulePoint.reach()
    for source in current { source.tokenEnded(self) }
  }
}

extension ChainCore {
  // Makes `member` a tracked member of `object`, reading its key path through `read`: reads it
  // once more to collect what it observes (the probe's read may have left a token in place
  // that an undone install replaced).
  //
  // `firstRead` is what binding read: a dependency that changed since is a change, sent by the
  // first re-read (made in the chain's delivery order; only for `Equatable` values, where a
  // change can be told from a read of the same value).
  func track<Object: AnyObject, Target>(
    _ member: Member, of object: Object, reading read: @escaping (Object) -> Target,
    firstRead: Any?
  ) {
    // Cast here, not by the caller: naming `Target?` there made every binding look up its
    // metadata (about 300 instructions).
    let firstRead = firstRead as? Target
    let last = Locked<Target?>(firstRead)
    // Looked up once: a conformance lookup per change costs more than the rest of the compare.
    let equatable = Target.self as? any Equatable.Type
    // Reads, compares with the last value (outside the lock: `==` and the old value's deinit are
    // user code), keeps the value, and sends it when it differs and `sending`.
    let reread = { (source: TrackedSource, member: Member, sending: Bool) -> [BoundToken]? in
      guard let object = member.object else { return nil }
      let (value, tokens) = Tracking.collect(for: source) {
        read(unsafeDowncast(object, to: Object.self))
      }
      // Reads are one at a time (inside the chain's delivery): swapped in one hold.
      let previous = last.withLock { last -> Target? in
        defer { last = value }
        return last
      }
      let changed: Bool
      if var previous, let equatable {
        var current = value
        changed = !withUnsafeMutablePointer(to: &previous) { previous in
          withUnsafeMutablePointer(to: &current) { equatable.bindIsEqual(previous, $0) }
        }
      } else {
        // The first read, or a value that is not `Equatable`: every read is a change.
        changed = true
      }
      if changed && sending, let send = member.send {
        withUnsafePointer(to: value) { send(nil, $0, member) }
      }
      return tokens
    }
    let source = TrackedSource(member: member, reread: reread)
    member.tracked = source
    let sends = firstRead != nil && equatable != nil
    serialize(toActor: false) { source.read(member, sending: sends) }
  }
}

enum Tracking {
  // Runs `read` with a collector for this thread, observing the `@Observable` properties it
  // reads for `source`; returns what it read and the tokens of the @Bound properties it touched.
  static func collect<Value>(
    for source: TrackedSource, _ read: () -> Value
  ) -> (Value, [BoundToken]) {
    let collector = DependencyCollector(source: source)
    let (value, _) = ObservationTicket.observing(for: source) {
      BoundProbe.collecting(into: collector, read)
    }
    return (value, collector.tokens)
  }
}

// Properties of `@Observable` classes read by a tracked member's key path (Docs/Semantics.md,
// "Tracked sources"). Observation keeps the callback of a read, and so its ticket, only when the
// read accessed an observable property: whether the ticket is still shared after the read tells
// whether there was one. On Linux the toolchain's `withObservationTracking(_:didSet:)` calls back
// synchronously, after the new value is stored, and stays armed until the tracking it passes is
// cancelled. Elsewhere only the public will-change callback exists: the re-read runs after it,
// in a task.
//
// @unchecked Sendable: `source` is set once, before any callback can reach it.
final class ObservationTicket: @unchecked Sendable {
  @exclusivity(unchecked) weak var source: TrackedSource?
  // The source's read that armed it: a watch armed by an older read only cancels itself.
  let generation: Int
  // Observation holds the watch, and so this ticket. Set by the arming thread while it holds
  // the ticket; read by the deinit only.
  @exclusivity(unchecked) private var isArmed = false

  init(source: TrackedSource?) {
    self.source = source
    generation = source?.readGeneration.wrappingAdd(1, ordering: .relaxed).newValue ?? 0
  }

  // Whether this ticket belongs to its source's latest read.
  var isCurrent: Bool {
    guard let source else { return false }
    return source.readGeneration.load(ordering: .relaxed) == generation
  }

  // Runs `read`, observing the `@Observable` properties it accesses for `source`; returns what
  // it read, and the ticket when it accessed any.
  static func observing<Value>(
    for source: TrackedSource?, _ read: () -> Value
  ) -> (Value, ObservationTicket?) {
    var ticket = ObservationTicket(source: source)
    let value = arm(ticket, read)
    if isKnownUniquelyReferenced(&ticket) { return (value, nil) }
    ticket.isArmed = true
    return (value, ticket)
  }

  // Observation let the watch go: it fired and was cancelled, or every object it watched was
  // deallocated, since a registrar drops its watches with its object (the only end of an
  // `@Observable` object that can be seen from outside it: Docs/Architecture.md, "When a chain
  // ends"). Then the member whose own object is gone ends at once. Runs inside the registrar's
  // teardown, under its lock, but with no ChainBind lock held.
  deinit {
    guard isArmed, let source else { return }
    source.endIfObjectGone()
  }

  #if os(Linux)
    private static func arm<Value>(_ ticket: ObservationTicket, _ read: () -> Value) -> Value {
      withObservationTracking(
        read,
        didSet: { [ticket] tracking in
          // Cancelled first: the next read arms a tracking of its own. A watch an older read
          // armed (a @Bound dependency's change re-read meanwhile) only cancels itself.
          tracking.cancel()
          if ticket.isCurrent { ticket.source?.dependencyChanged() }
        })
    }
  #else
    private static func arm<Value>(_ ticket: ObservationTicket, _ read: () -> Value) -> Value {
      withObservationTracking(
        read,
        onChange: { [ticket] in
          Task { if ticket.isCurrent { ticket.source?.dependencyChanged() } }
        })
    }
  #endif
}
