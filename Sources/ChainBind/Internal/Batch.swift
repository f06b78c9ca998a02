import Synchronization

// How many batches are open, in every thread (`Bind.batch`): a change outside any batch pays one
// relaxed load of it and a branch (`ChainCore.deliver`); the batch itself, a task-local value, is
// looked up only while this is not zero.
@usableFromInline let openBatches = Atomic<Int>(0)

// The outermost batch open on one thread, and what changed in it, in the order it first changed
// (Docs/Semantics.md, "Batches").
//
// @unchecked Sendable: a task-local value must be; only the thread that opened the batch touches
// its entries (`isHere`), child tasks that inherit it excepted, which `isHere` turns away.
final class Batch: @unchecked Sendable {
  @TaskLocal static var current: Batch?

  private enum Entry {
    // A chain whose value changed; `origin` is the last member that changed it, which holds it.
    case chain(AnyChain, origin: Member, deliver: (Member) -> Void)
    // A tracked member whose dependency changed: re-read once, at the end.
    case reread(TrackedSource)
  }

  private let thread = currentThreadID()
  private var entries: [Entry] = []
  // The index of each chain's and each re-read's entry.
  private var indices: [ObjectIdentifier: Int] = [:]

  // The batch open on this thread, if any.
  static var openHere: Batch? {
    guard let batch = current, batch.thread == currentThreadID() else { return nil }
    return batch
  }

  // `chain` accepted a change from `origin`, made its value without delivering it.
  func changed(_ chain: AnyChain, from origin: Member, deliver: @escaping (Member) -> Void) {
    let id = ObjectIdentifier(chain)
    if let index = indices[id] {
      entries[index] = .chain(chain, origin: origin, deliver: deliver)
    } else {
      indices[id] = entries.count
      entries.append(.chain(chain, origin: origin, deliver: deliver))
    }
  }

  // Defers a tracked member's re-read to the end of the batch, once.
  func reread(_ source: TrackedSource) {
    let id = ObjectIdentifier(source)
    guard indices[id] == nil else { return }
    indices[id] = entries.count
    entries.append(.reread(source))
  }

  // After the outermost batch closed: each chain delivers its value once, and each tracked
  // member is re-read once, in the order they first changed.
  func deliver() {
    let entries = self.entries
    self.entries = []
    indices = [:]
    for entry in entries {
      switch entry {
      case .chain(_, let origin, let deliver): deliver(origin)
      case .reread(let source): source.dependencyChanged()
      }
    }
  }
}

extension ChainCore {
  // A change made in a batch on this thread (`Bind.batch`): filtered now, made the chain's value,
  // and delivered when the outermost batch ends. False when it is delivered as without a batch:
  // no batch is open here, the chain delivers already (the change is queued, as always), or it
  // is isolated to an actor this thread is not on.
  @usableFromInline
  @inline(never)
  final func deliverInBatch(from origin: Member, _ value: Value) -> Bool {
    guard let batch = Batch.openHere else { return false }
    lock.lock()
    guard isActive, !isDelivering, !isIsolated || isolationElsewhere == nil else {
      lock.unlock()
      return false
    }
    origin.isAdmittedHere = false
    deliverer = currentThreadID()
    let previous = current
    let filters = filterCount > 0 ? (self.filters ?? []) : []
    lock.unlock()
    var dead: [Member] = []
    if isTraced {
      trace(.changeReceived(from: tracedName(of: origin), value: describeValue(value)))
    }
    if let rejecting = filters.indices.first(where: { !filters[$0](value) }) {
      if isTraced { trace(.filterRejected(filter: rejecting, value: describeValue(value))) }
      if origin.isAttached && isActive && origin.pendingChanges.load(ordering: .relaxed) == 0 {
        write(previous, to: origin, dead: &dead)
        if isTraced {
          trace(.reverted(member: tracedName(of: origin), value: describeValue(previous)))
        }
      }
      rejected(value)
    } else {
      lock.lock()
      let replaced = current
      current = value
      lock.unlock()
      withExtendedLifetime(replaced) {}
      batch.changed(self, from: origin) { [self] origin in deliverBatched(from: origin) }
    }
    finishDelivery(dead: &dead)
    return true
  }

  // At the end of a batch: delivers the chain's value, in the delivery's order, to every
  // receiving member but `origin` (which holds it) and to every sink, once.
  private func deliverBatched(from origin: Member) {
    serialize(toActor: true) { [self] in
      lock.lock()
      guard isActive else { return lock.unlock() }
      var dead: [Member] = []
      let value = current
      if isTraced {
        deliverTraced(value, from: origin, dead: &dead)
      } else {
        deliverAccepted(value, from: origin, dead: &dead)
      }
      if !dead.isEmpty { registry.prune(dead) }
    }
  }
}
