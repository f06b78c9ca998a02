import Synchronization

// A chain of values of type `Value`: its members, filters, sinks, current value and the queue of
// changes waiting for the change being delivered.
@usableFromInline
final class ChainCore<Value>: AnyChain, @unchecked Sendable {
  // The chain's value: the last change it accepted. Guarded like `state`; stored apart from it
  // because this code runs unspecialized, where a generic `ChainState` would look up run-time
  // type metadata on every change.
  @usableFromInline @exclusivity(unchecked) final var _current: Value

  @inlinable
  final func current(_ held: borrowing Held) -> Value { _current }

  override var valuesAreText: Bool { Value.self == String.self }

  @inlinable
  final func setCurrent(_ value: Value, _ held: borrowing Held) { _current = value }

  @inlinable
  final func extras(_ held: borrowing Held) -> ChainExtras<Value>? {
    _state.extras.map { unsafeDowncast($0, to: ChainExtras<Value>.self) }
  }

  // What the extras hold, read in place: `extras(held)?.sinks` would retain the extras too.
  @inlinable
  final func sinks(_ held: borrowing Held) -> ContiguousArray<Sink<Value>>? {
    _state.extras.flatMap { unsafeDowncast($0, to: ChainExtras<Value>.self).sinks }
  }

  @inlinable
  final func filters(_ held: borrowing Held) -> ContiguousArray<(Value) -> Bool>? {
    _state.extras.flatMap { unsafeDowncast($0, to: ChainExtras<Value>.self).filters }
  }

  // Made on first use. Filters, sinks and the queue in it stay nil until first used: making or
  // destroying an empty array of these generic element types looks up their metadata at run
  // time, which cost every chain about a thousand instructions.
  @usableFromInline
  final func extrasMade(_ held: borrowing Held) -> ChainExtras<Value> {
    unsafeDowncast(extrasInUse(held), to: ChainExtras<Value>.self)
  }

  @usableFromInline override func makeExtras() -> AnyChainExtras { ChainExtras<Value>() }

  init(registry: RegistryReference, id: UInt64, head: MemberAccess, current: Value) {
    _current = current
    super.init(registry: registry, id: id, head: head)
  }

  override func takeUserState(_ held: borrowing Held) -> Any? {
    // A traced chain's end: told after unlocking, when the registry releases what this returns.
    let ended = isTraced ? TraceNote(self, endsTrace: true) { .chainEnded } : nil
    // The error handler stays: errors about the released chain (adding to it) still reach it.
    // Most chains have none of these: boxing three empty generic arrays costs thousands of
    // instructions per release.
    guard let extras = extras(held),
      held.filterCount > 0 || held.sinkCount > 0 || held.queuedCount > 0
        || extras.listChange != nil
    else { return ended }
    let taken: Any = (extras.filters, extras.sinks, extras.queue, extras.listChange, ended)
    extras.listChange = nil
    extras.filters = nil
    extras.sinks = nil
    extras.queue = nil
    held.filterCount = 0
    held.sinkCount = 0
    held.queuedCount = 0
    return taken
  }

  var currentValue: Value { withLock { held in current(held) } }

  // How many list changes the chain's shared computation made (Bind+Testing.swift).
  var listChangesComputed: Int? {
    withLock { held in
      (held.extras?.listChange as? any ListChangeCounting)?.computedChanges
    }
  }

  // The change shared by the list sinks of this chain that match elements the same way; made
  // with `diff` for the first of them.
  @usableFromInline
  func sharedListChange<Element>(
    matchesByID: Bool, _ diff: @escaping ([Element], [Element]) -> ListChange<Element>
  ) -> SharedListChange<Element> where Value == [Element] {
    withLock { held in
      let extras = extrasMade(held)
      if let shared = extras.listChange as? SharedListChange<Element>,
        shared.matchesByID == matchesByID
      {
        return shared
      }
      let shared = SharedListChange(matchesByID: matchesByID, diff: diff)
      // The first kind of matching added is shared; another kind, rare, is not.
      if extras.listChange == nil { extras.listChange = shared }
      return shared
    }
  }

  // MARK: Configuration

  func addFilter(_ filter: @escaping (Value) -> Bool) -> Bool {
    withLock { held in
      guard isActive else { return false }
      let extras = extrasMade(held)
      extras.filters = (extras.filters ?? []) + [filter]
      held.filterCount += 1
      return true
    }
  }

  // Adds (or replaces) a keyed sink and calls it first with the chain's current value when
  // `initial`, in the delivery's order; false when the chain is inactive. Without that call, it
  // takes every delivery that begins from now on, even one of a change queued before: waiting
  // for its turn, it missed a tracked member's change read early, by a read queued before it.
  func addSink(_ sink: Sink<Value>, initial: Bool) -> Bool {
    let added = withLock { held -> (added: Bool, replaced: Sink<Value>?) in
      guard isActive else { return (false, nil) }
      let extras = extrasMade(held)
      var replaced: Sink<Value>?
      var sinks = extras.sinks ?? []
      extras.sinks = nil
      defer { extras.sinks = sinks }
      if let index = sinks.firstIndex(where: { $0.key == sink.key }) {
        replaced = sinks.remove(at: index)
        replaced?.markRemoved()
      }
      sink.order = extras.numberSink()
      if !initial {
        // Not user code: a list sink's differ keeps the list (`ListDiffer.start`).
        sink.start?(current(held))
        sink.markReady()
      }
      sinks.append(sink)
      held.sinkCount = Int32(sinks.count)
      return (true, replaced)
    }
    // Released after unlocking: its captures' deinits may use this chain.
    if let replaced = added.replaced { dropWork(key: .firstValue(of: replaced)) }
    withExtendedLifetime(added.replaced) {}
    guard added.added else { return false }
    guard initial else { return true }
    serialize(toActor: false, workKey: .firstValue(of: sink)) { [self] in
      guard !sink.isRemoved else { return }
      if isTraced { trace(.sinkCalled(key: sink.tracedKey)) }
      sink.body(currentValue)
      sink.markReady()
    }
    return true
  }

  func removeSink(key: String) -> Sink<Value>? {
    withLock { held -> Sink<Value>? in
      guard let extras = extras(held), var sinks = extras.sinks,
        let index = sinks.firstIndex(where: { $0.key == key })
      else { return nil }
      extras.sinks = nil
      defer { extras.sinks = sinks }
      let removed = sinks.remove(at: index)
      held.sinkCount = Int32(sinks.count)
      removed.markRemoved()
      return removed
    }
    .map { removed in
      dropWork(key: .firstValue(of: removed))
      return removed
    }
  }

  override func resync(_ member: Member) {
    serialize(toActor: true) { [self] in
      guard member.takesDelivery else { return }
      var dead = DeadMembers()
      write(currentValue, to: member, dead: &dead)
      registry.prune(&dead)
    }
  }

  override func takeWork(of member: Member, _ held: borrowing Held) -> Any? {
    guard let extras = extras(held) else { return nil }
    let firstValue = extras.queue?.remove(key: .firstValue(of: member))
    let firstRead = extras.queue?.remove(key: .firstRead(of: member))
    held.queuedCount -= (firstValue == nil ? 0 : 1) + (firstRead == nil ? 0 : 1)
    return firstValue == nil && firstRead == nil ? nil : (firstValue, firstRead)
  }

  override func dropWork(key: PendingKey) {
    let dropped = withLock { held -> Queued<Value>? in
      guard let dropped = extras(held)?.queue?.remove(key: key) else { return nil }
      held.queuedCount -= 1
      return dropped
    }
    // Released after unlocking: what it captured may use this chain.
    withExtendedLifetime(dropped) {}
  }

  // MARK: Work in the delivery

  override func queueWork(unlessWaiting key: PendingKey, _ make: () -> () -> Void) {
    let held = acquire()
    if isActive, extras(held)?.queue?.contains(key: key) != true {
      enqueue(work: make(), key: key, held)
    }
    release(held)
  }

  override func endOwnWork() {
    // One lock for the work's end and the delivery's.
    let held = acquire()
    held.transition { $0.endWork() }
    held.extras?.insertion = nil
    var dead = DeadMembers()
    finishDelivery(dead: &dead, held)
  }

  // Runs `work` inside the chain's one-at-a-time delivery (Docs/Semantics.md, "Threading"): at
  // once when no thread delivers (this thread then delivers what `work` causes) or this thread
  // does; otherwise it is queued for the thread that delivers, which never waits for it.
  // `toActor`: in a chain isolated to an actor, off the actor, `work` is queued for the actor.
  override func serialize(
    toActor: Bool, nests: Bool = true, workKey: PendingKey? = nil,
    now: (_ isDeliveringHere: Bool) -> Void, later: () -> (() -> Void)?
  ) {
    SchedulePoint.reach()
    let merging = workKey?.mergesWaiting == true ? workKey : nil
    if toActor, isIsolated, let isolation, !isolation.isActorGone, !isolation.isCurrent {
      isolation.enqueue(from: nil, in: self, merging: merging) {
        later().map { work in { self.serialize(toActor: false, work) } }
      }
      return
    }
    let held = acquire()
    guard isActive else { return release(held) }
    let thread = currentThreadID()
    if held.delivery.isDelivering(on: thread) {
      release(held)
      return now(true)
    }
    if held.isDelivering {
      // A re-read waiting already goes last instead: it reads the latest.
      if let merging, extras(held)?.queue?.moveToBack(key: merging) == true {
        return release(held)
      }
      if let work = later() { enqueue(work: work, key: workKey, held) }
      return release(held)
    }
    startOwnWork(on: thread, nests: nests, held)
    now(false)
    endOwnWork()
  }
}
