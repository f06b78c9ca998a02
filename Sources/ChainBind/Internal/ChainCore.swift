import Synchronization

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

  init(registry: RegistryReference, id: UInt64, head: MemberAccess, current: Value) {
    self.current = current
    super.init(registry: registry, id: id, head: head)
  }

  override func takeUserState() -> Any? {
    // A traced chain's end: told after unlocking, when the registry releases what this returns.
    let ended = isTraced ? TraceNote(self, endsTrace: true) { .chainEnded } : nil
    // The error handler stays: errors about the released chain (adding to it) still reach it.
    // Most chains have none of these: boxing three empty generic arrays costs thousands of
    // instructions per release.
    guard filterCount > 0 || sinkCount > 0 || queuedCount > 0 || listChange != nil else {
      return ended
    }
    let state: Any = (filters, sinks, queue, listChange, ended)
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

  // MARK: Work in the delivery

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
}
