import Synchronization

// Every active chain, and every membership by object, for join, move and unbind.
//
// Only binding, unbinding, deallocation and pruning come here; a change (set -> members) never
// does. Lock order: the registry's lock, then a chain's lock. Nothing removed under the lock is
// released under it: removed members, chains and user closures are handed back as `Garbage` and
// dropped after unlocking, because their deinits may run user code that binds or unbinds.
//
// @unchecked Sendable: all mutable state is guarded by `lock`.
final class Registry: @unchecked Sendable {
  static let shared = Registry()

  // Lets tests work in a registry of their own, so process-wide counts stay exact while other
  // tests run in parallel. Read only when binding, never on the hot path.
  @TaskLocal static var scoped: Registry?

  static var current: Registry { scoped ?? shared }

  private let lock = Lock()
  private var chains: [UInt64: AnyChain] = [:]
  // The first of each object's memberships; the rest follow through `nextInObject`.
  private var objects: [ObjectIdentifier: AnyMember] = [:]

  private static let nextChainID = Atomic<UInt64>(1)

  static func makeChainID() -> UInt64 {
    nextChainID.wrappingAdd(1, ordering: .relaxed).oldValue
  }

  var activeChainCount: Int { lock.run { chains.count } }

  // MARK: Lookup

  // The membership of `(object, keyPath)`, if any. The caller holds `object`, so an entry for
  // its identifier either is its own or belongs to a dead object whose address was reused.
  func member(of object: AnyObject, keyPath: AnyKeyPath) -> AnyMember? {
    let (found, garbage) = lock.run { () -> (AnyMember?, Garbage) in
      var garbage = Garbage()
      let found = liveList(of: object, garbage: &garbage).first { $0.keyPath == keyPath }
      return (found, garbage)
    }
    withExtendedLifetime(garbage) {}
    return found
  }

  func chain(for code: ChainCode) -> AnyChain? {
    lock.run { chains[code.id] }
  }

  // MARK: Attach

  enum AttachOutcome {
    case attached
    // The chain was released before the member could join it.
    case chainInactive
    // The member replaced the chain's last sender with a member that does not send, so the
    // chain was released (DESIGN §5.3).
    case chainReleased
  }

  // Makes `member` a member of its chain, moving `(object, keyPath)` out of any other chain or
  // replacing it in place in the same chain. Registers the chain when it is new.
  func attach(_ member: AnyMember, object: AnyObject) -> AttachOutcome {
    let (outcome, garbage) = lock.run { () -> (AttachOutcome, Garbage) in
      var garbage = Garbage()
      let chain = member.chain
      guard chain.isActive else { return (.chainInactive, garbage) }
      let existing = liveList(of: object, garbage: &garbage).first {
        $0.keyPath == member.keyPath
      }
      if let existing {
        unlink(existing)
        existing.markDetached()
        garbage.members.append(existing)
        if existing.chain !== chain {
          removeFromChain(existing, garbage: &garbage)
        }
      }
      let replaced = existing.flatMap { $0.chain === chain ? $0 : nil }
      let inserted = chain.insert(member, replacing: replaced)
      if case .inactive = inserted { return (.chainInactive, garbage) }
      member.nextInObject = objects[member.objectID]
      objects[member.objectID] = member
      if chains[chain.code.id] == nil { chains[chain.code.id] = chain }
      if case .lastSenderReplaced = inserted {
        releaseLocked(chain, garbage: &garbage)
        return (.chainReleased, garbage)
      }
      return (.attached, garbage)
    }
    garbage.pruneTouchedChains()
    withExtendedLifetime(garbage) {}
    return outcome
  }

  // MARK: Detach

  // Removes one membership (its token or control died, or it was unbound).
  func detach(_ member: AnyMember) {
    let garbage = lock.run { () -> Garbage in
      var garbage = Garbage()
      detachLocked(member, garbage: &garbage)
      return garbage
    }
    garbage.pruneTouchedChains()
  }

  // Removes members whose objects are gone.
  func prune(_ members: [AnyMember]) {
    let garbage = lock.run { () -> Garbage in
      var garbage = Garbage()
      for member in members { detachLocked(member, garbage: &garbage) }
      return garbage
    }
    withExtendedLifetime(garbage) {}
  }

  func unbind(_ object: AnyObject) {
    let garbage = lock.run { () -> Garbage in
      var garbage = Garbage()
      for member in liveList(of: object, garbage: &garbage) {
        detachLocked(member, garbage: &garbage)
      }
      return garbage
    }
    garbage.pruneTouchedChains()
  }

  func unbind(_ object: AnyObject, keyPath: AnyKeyPath) {
    let garbage = lock.run { () -> Garbage in
      var garbage = Garbage()
      if let member = liveList(of: object, garbage: &garbage).first(where: {
        $0.keyPath == keyPath
      }) {
        detachLocked(member, garbage: &garbage)
      }
      return garbage
    }
    garbage.pruneTouchedChains()
  }

  func release(_ chain: AnyChain) {
    let garbage = lock.run { () -> Garbage in
      var garbage = Garbage()
      releaseLocked(chain, garbage: &garbage)
      return garbage
    }
    withExtendedLifetime(garbage) {}
  }

  // MARK: Locked helpers

  private func detachLocked(_ member: AnyMember, garbage: inout Garbage) {
    guard member.isAttached else { return }
    unlink(member)
    member.markDetached()
    garbage.members.append(member)
    removeFromChain(member, garbage: &garbage)
  }

  // A chain whose last sending member left is released (DESIGN §5.3).
  private func removeFromChain(_ member: AnyMember, garbage: inout Garbage) {
    let chain = member.chain
    guard chain.isActive else { return }
    garbage.touched.append(chain)
    if chain.remove(member) {
      releaseLocked(chain, garbage: &garbage)
    }
  }

  private func releaseLocked(_ chain: AnyChain, garbage: inout Garbage) {
    guard chain.isActive else { return }
    chain.markInactive()
    chains[chain.code.id] = nil
    garbage.chains.append(chain)
    let (members, userState) = chain.takeEverything()
    garbage.userState.append(userState)
    for member in members where member.isAttached {
      unlink(member)
      member.markDetached()
      garbage.members.append(member)
    }
  }

  // The memberships of `object`. A list left by a dead object at the same address is removed.
  private func liveList(of object: AnyObject, garbage: inout Garbage) -> [AnyMember] {
    guard let first = objects[ObjectIdentifier(object)] else { return [] }
    if first.object !== object {
      var stale: AnyMember? = first
      while let member = stale {
        stale = member.nextInObject
        detachLocked(member, garbage: &garbage)
      }
      return []
    }
    var list: [AnyMember] = []
    var next: AnyMember? = first
    while let member = next {
      list.append(member)
      next = member.nextInObject
    }
    return list
  }

  private func unlink(_ member: AnyMember) {
    guard let first = objects[member.objectID] else { return }
    if first === member {
      objects[member.objectID] = member.nextInObject
    } else {
      var previous = first
      while let next = previous.nextInObject {
        if next === member {
          previous.nextInObject = member.nextInObject
          break
        }
        previous = next
      }
    }
    member.nextInObject = nil
  }
}

// What a locked registry operation removed, released by the caller after unlocking.
struct Garbage {
  var members: [AnyMember] = []
  var chains: [AnyChain] = []
  var userState: [Any] = []
  // Chains a member left: their dead members are pruned after unlocking (DESIGN §5.2).
  var touched: [AnyChain] = []

  // Call after unlocking.
  func pruneTouchedChains() {
    for chain in touched where chain.isActive { chain.pruneDeadMembers() }
  }
}
