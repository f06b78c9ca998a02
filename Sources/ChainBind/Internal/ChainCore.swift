import Synchronization

// The part of a chain the registry works on, whatever the chain's value type.
//
// @unchecked Sendable: `members` is guarded by `lock`; `active` is atomic. The registry takes a
// chain's lock only while holding its own lock (order: registry, then chain), and no user code
// ever runs under either.
class AnyChain: @unchecked Sendable {
  let registry: Registry
  let code: ChainCode
  let lock = Mutex<Void>(())
  // Guarded by `lock`. Written and read in the order members were added (DESIGN §2.4).
  var members: ContiguousArray<AnyMember> = []
  private let active = Atomic<Bool>(true)

  init(registry: Registry, code: ChainCode) {
    self.registry = registry
    self.code = code
  }

  var isActive: Bool { active.load(ordering: .acquiring) }

  // Registry lock held.
  func markInactive() { active.store(false, ordering: .releasing) }

  // Registry lock held. Returns false when the chain was released meanwhile.
  func insert(_ member: AnyMember, replacing old: AnyMember?) -> Bool {
    lock.run {
      guard isActive else { return false }
      if let old, let index = members.firstIndex(where: { $0 === old }) {
        members[index] = member
      } else {
        members.append(member)
      }
      return true
    }
  }

  // Registry lock held. Returns whether the chain should be released: its last sending member
  // left (DESIGN §5.3), or no member at all is left. A chain that never had a sender (its head
  // is not observable) stays while it has members: a sender may still join it.
  func remove(_ member: AnyMember) -> Bool {
    lock.run {
      if let index = members.firstIndex(where: { $0 === member }) {
        members.remove(at: index)
      }
      if members.isEmpty { return true }
      return member.role.sends && !members.contains { $0.role.sends }
    }
  }

  // Registry lock held. Empties the chain; the caller releases what it returns after unlocking.
  func takeEverything() -> (members: ContiguousArray<AnyMember>, userState: Any) {
    lock.run {
      let taken = members
      members = []
      return (taken, takeUserState())
    }
  }

  // Chain lock held. Filters, sinks, queued changes and the error handler.
  func takeUserState() -> Any { () }

  func snapshotMembers() -> ContiguousArray<AnyMember> {
    lock.run { members }
  }

  // Removes members whose objects are gone (DESIGN §5.2). Liveness is checked outside every
  // lock: loading a weak reference may release the last strong one, and so run a deinit.
  func pruneDeadMembers() {
    let gone = snapshotMembers().filter { $0.object == nil }
    if !gone.isEmpty { registry.prune(Array(gone)) }
  }
}

// A chain of values of type `Value`: its members, filters, sinks, current value and the queue of
// changes waiting for the change being delivered.
final class ChainCore<Value>: AnyChain, @unchecked Sendable {
  // All guarded by `lock`.
  private var current: Value
  private var filters: ContiguousArray<(Value) -> Bool> = []
  private var sinks: ContiguousArray<Sink<Value>> = []
  private var errorHandler: ((BindingError) -> Void)?
  private var isDelivering = false
  private var queue: ContiguousArray<PendingChange<Value>> = []

  init(registry: Registry, code: ChainCode, current: Value) {
    self.current = current
    super.init(registry: registry, code: code)
  }

  override func takeUserState() -> Any {
    // The error handler stays: errors about the released chain (adding to it) still reach it.
    let state: Any = (filters, sinks, queue)
    filters = []
    sinks = []
    queue = []
    return state
  }

  var currentValue: Value { lock.run { current } }

  // MARK: Configuration

  func addFilter(_ filter: @escaping (Value) -> Bool) -> Bool {
    lock.run {
      guard isActive else { return false }
      filters.append(filter)
      return true
    }
  }

  func setErrorHandler(_ handler: @escaping (BindingError) -> Void) {
    let replaced = lock.run { () -> ((BindingError) -> Void)? in
      defer { errorHandler = handler }
      return errorHandler
    }
    // Released here, after unlocking: its captures' deinits may use this chain.
    withExtendedLifetime(replaced) {}
  }

  // Adds (or replaces) a keyed sink and returns the value to call it with first, or nil when
  // the chain is inactive.
  func addSink(_ sink: Sink<Value>) -> (current: Value, replaced: Sink<Value>?)? {
    lock.run { () -> (Value, Sink<Value>?)? in
      guard isActive else { return nil }
      var replaced: Sink<Value>?
      if let index = sinks.firstIndex(where: { $0.key == sink.key }) {
        replaced = sinks.remove(at: index)
        replaced?.markRemoved()
      }
      sinks.append(sink)
      return (current, replaced)
    }
  }

  func removeSink(key: String) -> Sink<Value>? {
    lock.run {
      guard let index = sinks.firstIndex(where: { $0.key == key }) else { return nil }
      let removed = sinks.remove(at: index)
      removed.markRemoved()
      return removed
    }
  }

  // MARK: Errors

  func report(_ error: BindingError) {
    let handler = lock.run { errorHandler }
    Self.report(error, to: handler)
  }

  static func report(_ error: BindingError, to handler: ((BindingError) -> Void)?) {
    if let handler {
      handler(error)
    } else {
      Bind.fallbackErrorHandler(error)
    }
  }

  // MARK: Propagation

  // Delivers a change that `origin` made. Changes to one chain are delivered one at a time: a
  // change that arrives while another is being delivered (from a sink, from a setter, or from
  // another thread) is queued, and the thread already delivering delivers it next.
  func deliver(from origin: MemberNode<Value>, _ value: Value) {
    guard var turn = beginTurn(origin: origin, value: value) else { return }
    var dead: [AnyMember] = []
    while true {
      deliverOne(turn, dead: &dead)
      guard let next = nextTurn() else { break }
      turn = next
    }
    if !dead.isEmpty { registry.prune(dead) }
  }

  private struct Turn {
    let origin: MemberNode<Value>
    let value: Value
    let previous: Value
    let isAccepted: Bool
    let members: ContiguousArray<AnyMember>
    let filters: ContiguousArray<(Value) -> Bool>
    let sinks: ContiguousArray<Sink<Value>>
    let errorHandler: ((BindingError) -> Void)?
  }

  private func beginTurn(origin: MemberNode<Value>, value: Value) -> Turn? {
    lock.run { () -> Turn? in
      guard isActive else { return nil }
      if isDelivering {
        queue.append(PendingChange(origin: origin, value: value))
        return nil
      }
      isDelivering = true
      return makeTurn(origin: origin, value: value)
    }
  }

  private func nextTurn() -> Turn? {
    let (turn, dropped) = lock.run { () -> (Turn?, ContiguousArray<PendingChange<Value>>) in
      guard isActive, !queue.isEmpty else {
        isDelivering = false
        let dropped = queue
        if !queue.isEmpty { queue = [] }
        return (nil, dropped)
      }
      let pending = queue.removeFirst()
      return (makeTurn(origin: pending.origin, value: pending.value), [])
    }
    _ = dropped
    return turn
  }

  // Chain lock held. With no filters the change is accepted here, so only the turn's start and
  // end take the lock.
  private func makeTurn(origin: MemberNode<Value>, value: Value) -> Turn {
    let previous = current
    let isAccepted = filters.isEmpty
    if isAccepted { current = value }
    return Turn(
      origin: origin, value: value, previous: previous, isAccepted: isAccepted,
      members: members, filters: filters, sinks: sinks, errorHandler: errorHandler)
  }

  private func deliverOne(_ turn: Turn, dead: inout [AnyMember]) {
    let origin = turn.origin
    guard origin.isAttached else {
      if !turn.isAccepted { return }
      // Accepted at the start of the turn but its member left meanwhile: restore.
      lock.run { current = turn.previous }
      return
    }
    if !turn.isAccepted {
      for filter in turn.filters where !filter(turn.value) {
        // Rejected: nothing is written, no sink runs, the origin gets the last accepted value.
        handle(origin.receive(turn.previous), of: origin, turn: turn, dead: &dead)
        return
      }
      lock.run { current = turn.value }
    }
    for member in turn.members where member !== origin && member.role.receives {
      guard member.isAttached, isActive else { continue }
      let node = unsafeDowncast(member, to: MemberNode<Value>.self)
      handle(node.receive(turn.value), of: node, turn: turn, dead: &dead)
    }
    for sink in turn.sinks where !sink.isRemoved && isActive {
      sink.body(turn.value)
    }
  }

  private func handle(
    _ outcome: WriteOutcome, of member: AnyMember, turn: Turn, dead: inout [AnyMember]
  ) {
    switch outcome {
    case .written, .unchanged, .skipped: break
    case .objectGone: dead.append(member)
    case .failed(let error): Self.report(error, to: turn.errorHandler)
    }
  }
}

struct PendingChange<Value> {
  let origin: MemberNode<Value>
  let value: Value
}

// A keyed sink. `removed` lets a delivery that already copied the sink list skip a sink that was
// removed or replaced meanwhile.
final class Sink<Value>: @unchecked Sendable {
  let key: String
  let body: (Value) -> Void
  private let removed = Atomic<Bool>(false)

  init(key: String, body: @escaping (Value) -> Void) {
    self.key = key
    self.body = body
  }

  var isRemoved: Bool { removed.load(ordering: .acquiring) }
  func markRemoved() { removed.store(true, ordering: .releasing) }
}
