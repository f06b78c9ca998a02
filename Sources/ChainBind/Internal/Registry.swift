import Synchronization

// Every membership by object, for join, move and unbind, and the number of active chains. A
// chain is held by its members, and found from its code (`ChainCode.chain`).
//
// Only binding, unbinding, deallocation and pruning come here; a change (set -> members) never
// does. Lock order: the registry's lock, then a chain's lock. Nothing removed under the lock is
// released under it: removed members, chains and user closures are handed back as `Garbage` and
// dropped after unlocking, because their deinits may run user code that binds or unbinds.
@usableFromInline
final class Registry: Sendable {
  static let shared = Registry()

  // Lets tests work in a registry of their own, so process-wide counts stay exact while other
  // tests run in parallel. Read only when binding, never on the hot path.
  @TaskLocal static var scoped: Registry?

  // How many scopes are open: with none (outside ChainBind's tests), binding skips the
  // task-local read.
  static let openScopes = Atomic<Int>(0)

  static var current: Registry {
    openScopes.load(ordering: .relaxed) == 0 ? shared : scoped ?? shared
  }

  private let tables = Locked(Tables())

  private static let nextChainID = Atomic<UInt64>(1)

  static func makeChainID() -> UInt64 {
    nextChainID.wrappingAdd(1, ordering: .relaxed).oldValue
  }

  var activeChainCount: Int { tables.withLock { $0.chainCount } }

  // How many accesses members share (Bind+Testing.swift).
  var sharedAccessCount: Int {
    tables.withLock { $0.keyPaths.values.reduce(0) { $0 + $1.sharedCount } }
  }

  // The membership of `(object, keyPath)`, if any.
  func member(of object: AnyObject, keyPath: AnyKeyPath) -> Member? {
    lookUp(object, keyPath, askingIfPlain: false, sharing: nil).member
  }

  // What the registry knows before a member of `(object, keyPath)` is added.
  struct Lookup {
    // The property's membership.
    var member: Member?
    // `keyPath`, a shared key path (`MemberThunks.isSharedKeyPath`), is known to reach no
    // @Bound property, when asked.
    var isPlain = false
    // The access members of the `sharing` key share, once one was attached.
    var access: MemberAccess?
  }

  func lookUp(
    _ object: AnyObject, _ keyPath: AnyKeyPath, askingIfPlain: Bool, sharing key: MemberAccessKey?
  ) -> Lookup {
    withGarbage(pruningTouched: false) { tables, garbage in
      var lookup = Lookup(
        member: tables.membership(of: object, keyPath: keyPath, garbage: &garbage))
      if askingIfPlain || key != nil, let facts = tables.facts(of: keyPath) {
        lookup.isPlain = askingIfPlain && facts.isPlain
        lookup.access = key.flatMap { facts.access(for: $0) }
      }
      return lookup
    }
  }

  // How many shared accesses no attached member uses are kept for the next member of their call
  // site, at most.
  static let idleAccessLimit = 32

  enum AttachOutcome {
    case attached
    // The chain was released before the member could join it.
    case chainInactive
    // The member replaced the chain's last sender with a member that does not send, so the
    // chain was released.
    case chainReleased
  }

  // Makes `member` a member of its chain, moving `(object, keyPath)` out of any other chain or
  // replacing it in place in the same chain. Counts the chain when it is new. With `key`, the
  // member's access becomes the one members of that key share, unless one already is.
  // `isPlain`: reading the member's key path, shared, from an object of exactly its root type
  // touched no @Bound property; noted with the access it shares.
  func attach(
    _ member: Member, object: AnyObject, sharing key: MemberAccessKey? = nil, isPlain: Bool = false
  ) -> AttachOutcome {
    withGarbage(pruningTouched: true) { tables, garbage in
      let outcome = tables.attach(
        member, object: object, sharing: key, isPlain: isPlain, garbage: &garbage)
      tables.sweep(garbage: &garbage)
      return outcome
    }
  }

  // How many slots of the table each attach sweeps for members whose objects are gone: more
  // than the one membership an attach adds, so that memberships nothing saw die (a plain
  // member, a tracked one whose observed objects live on) cannot pile up, whatever the churn.
  // Eight covers the smallest table in one attach.
  static let sweepStride = 8

  // Removes one membership (its token or control died, or it was unbound).
  func detach(_ member: Member) {
    withGarbage(pruningTouched: true) { tables, garbage in
      tables.detach(member, garbage: &garbage)
    }
  }

  // Removes members whose objects are gone.
  @usableFromInline
  func prune(_ members: [Member]) {
    withGarbage(pruningTouched: false) { tables, garbage in
      for member in members { tables.detach(member, garbage: &garbage) }
    }
  }

  func unbind(_ object: AnyObject) {
    withGarbage(pruningTouched: true) { tables, garbage in
      for member in tables.liveList(of: object, garbage: &garbage) {
        tables.detach(member, garbage: &garbage)
      }
    }
  }

  func unbind(_ object: AnyObject, keyPath: AnyKeyPath) {
    withGarbage(pruningTouched: true) { tables, garbage in
      if let member = tables.membership(of: object, keyPath: keyPath, garbage: &garbage) {
        tables.detach(member, garbage: &garbage)
      }
    }
  }

  func release(_ chain: AnyChain) {
    withGarbage(pruningTouched: false) { tables, garbage in
      tables.release(chain, garbage: &garbage)
    }
  }

  // Runs `body` under the lock. What it removes goes into `garbage` and is released only after
  // unlocking; with `pruningTouched`, the chains that removed members left are then pruned of
  // their dead members (not for `prune` itself, nor for a release, which empties the chain).
  private func withGarbage<Result>(
    pruningTouched: Bool, _ body: (inout Tables, inout Garbage) -> Result
  ) -> Result {
    let (result, garbage) = tables.withLock { tables -> (Result, Garbage) in
      var garbage = Garbage()
      let result = body(&tables, &garbage)
      return (result, garbage)
    }
    if pruningTouched { garbage.pruneTouchedChains() }
    if !garbage.swept.isEmpty { pruneDead(garbage.swept) }
    withExtendedLifetime(garbage) {}
    return result
  }

  // Removes those of `members` whose objects are gone. After unlocking: a weak load may release
  // the last reference to an object, and run its deinit.
  private func pruneDead(_ members: [Member]) {
    var gone: [Member] = []
    for member in members where member.isAttached && member.object == nil { gone.append(member) }
    if !gone.isEmpty { prune(gone) }
  }
}

extension Registry {
  // The registry's state, only ever touched under its lock.
  private struct Tables {
    // The chains that had a member attached and were not released yet.
    var chainCount = 0
    // Every attached member, by its object.
    var memberships = MembershipTable()
    // What is known of shared key paths (`MemberThunks.isSharedKeyPath`), by identity: a literal
    // without subscript arguments, which the runtime keeps, or a key path passed in a variable.
    // An entry lives while one of its shared accesses does, and they hold the key path: its
    // address names no other meanwhile.
    var keyPaths: [ObjectIdentifier: KeyPathFacts] = [:]
    // Shared accesses that no attached member used when their last one ended: kept for the next
    // member of their call site, up to `Registry.idleAccessLimit`, so that a key path made at run
    // time (and its subscript arguments) is not kept for good. The least recently used goes first,
    // nearly: an access used again since it was queued gets a second chance at the back (the
    // clock algorithm), which costs a change of its flag and no move per reuse.
    private var idle: ContiguousArray<MemberAccess> = []

    // The facts of `keyPath`, if any.
    func facts(of keyPath: AnyKeyPath) -> KeyPathFacts? {
      keyPaths[ObjectIdentifier(keyPath)]
    }

    // Makes `access` the one members of `key` share, unless one already is.
    private mutating func share(_ access: MemberAccess, as key: MemberAccessKey) {
      if let facts = keyPaths[key.keyPath] {
        facts.share(access, as: key)
      } else {
        let facts = KeyPathFacts()
        facts.share(access, as: key)
        keyPaths[key.keyPath] = facts
      }
    }

    // A member that used the shared access of its key ends. The access stays shared while it is
    // among the most recent idle ones.
    private mutating func memberEnded(_ member: Member, garbage: inout Garbage) {
      let access = member.access
      guard access.isShared else { return }
      access.attachedMembers -= 1
      guard access.attachedMembers == 0, !access.isIdle else { return }
      access.isIdle = true
      access.wasUsedAgain = false
      idle.append(access)
      if idle.count > Registry.idleAccessLimit { evictIdle(garbage: &garbage) }
    }

    // Ends the sharing of the idle access used least recently, nearly: from the front, an
    // access a member uses now leaves the queue, and one used again since it was queued goes to
    // the back. The facts of its key path go with their last access. Released after unlocking:
    // a key path's subscript arguments are the caller's values.
    private mutating func evictIdle(garbage: inout Garbage) {
      while !idle.isEmpty {
        let access = idle.removeFirst()
        if access.attachedMembers > 0 {
          access.isIdle = false
          continue
        }
        if access.wasUsedAgain {
          access.wasUsedAgain = false
          idle.append(access)
          continue
        }
        access.isIdle = false
        let id = ObjectIdentifier(access.keyPath)
        guard access.isShared, let facts = keyPaths[id] else { return }
        facts.unshare(access)
        garbage.release(access)
        if facts.sharedCount == 0 { keyPaths[id] = nil }
        return
      }
    }

    mutating func attach(
      _ member: Member, object: AnyObject, sharing key: MemberAccessKey?, isPlain: Bool,
      garbage: inout Garbage
    ) -> AttachOutcome {
      let chain = member.chain
      guard chain.isActive else { return .chainInactive }
      let existing = membership(of: object, keyPath: member.keyPath, garbage: &garbage)
      if let existing {
        end(existing, garbage: &garbage)
        if existing.chain !== chain {
          removeFromChain(existing, garbage: &garbage)
        }
      }
      let replaced = existing.flatMap { $0.chain === chain ? $0 : nil }
      let inserted = chain.insert(member, replacing: replaced)
      if case .inactive = inserted { return .chainInactive }
      memberships.insert(member)
      if let key { share(member.access, as: key) }
      if member.access.isShared {
        if member.access.isIdle { member.access.wasUsedAgain = true }
        member.access.attachedMembers += 1
        if isPlain { keyPaths[ObjectIdentifier(member.keyPath)]?.isPlain = true }
      }
      if let token = member.token, let other = token.currentMember, other !== member {
        // One `@Bound` storage bound under another spelling of its key path: the other
        // membership ends (Docs/Semantics.md, "Chains and members"), so that a member with a
        // token is always its token's member, which ends it with its object.
        detach(other, garbage: &garbage)
        if !chain.isActive { return .chainReleased }
      }
      // Under this lock, like every detach, so that a detach cannot come first.
      member.token?.attach(member)
      if !chain.isCounted {
        chain.isCounted = true
        chainCount += 1
      }
      if case .lastSenderReplaced = inserted {
        release(chain, garbage: &garbage)
        return .chainReleased
      }
      return .attached
    }

    // Hands the members of the next `Registry.sweepStride` slots that no token ends to the
    // caller, which checks after unlocking whether their objects are gone.
    mutating func sweep(garbage: inout Garbage) {
      memberships.sweep(Registry.sweepStride) { member in
        if member.token == nil { garbage.swept.append(member) }
      }
    }

    mutating func detach(_ member: Member, garbage: inout Garbage) {
      guard member.isAttached else { return }
      end(member, garbage: &garbage)
      removeFromChain(member, garbage: &garbage)
    }

    // A membership ends: out of the table, unlinked from its token and its observed properties,
    // and released by the caller after unlocking.
    private mutating func end(_ member: Member, garbage: inout Garbage) {
      memberships.remove(member)
      member.markDetached()
      garbage.release(member)
      memberEnded(member, garbage: &garbage)
    }

    // A chain whose last sending member left is released (Docs/Semantics.md, "Lifetime").
    private mutating func removeFromChain(_ member: Member, garbage: inout Garbage) {
      let chain = member.chain
      guard chain.isActive else { return }
      if chain.remove(member) {
        release(chain, garbage: &garbage)
      } else {
        garbage.touched.append(chain)
      }
    }

    mutating func release(_ chain: AnyChain, garbage: inout Garbage) {
      guard chain.isActive else { return }
      chain.markInactive()
      if chain.isCounted { chainCount -= 1 }
      garbage.release(chain)
      let (members, userState) = chain.takeEverything()
      if let userState { garbage.release(userState) }
      for member in members where member.isAttached { end(member, garbage: &garbage) }
    }

    // The membership of `(object, keyPath)`. The caller holds `object`, so the memberships under
    // its identifier either are its own or belong to a dead object whose address was reused.
    mutating func membership(
      of object: AnyObject, keyPath: AnyKeyPath, garbage: inout Garbage
    ) -> Member? {
      removeStale(of: object, garbage: &garbage)
      return memberships.first(of: ObjectIdentifier(object)) { $0.keyPath == keyPath }
    }

    // The memberships of `object`.
    mutating func liveList(of object: AnyObject, garbage: inout Garbage) -> [Member] {
      removeStale(of: object, garbage: &garbage)
      var list: [Member] = []
      memberships.forEach(of: ObjectIdentifier(object)) { list.append($0) }
      return list
    }

    // Removes the memberships a dead object left at `object`'s address. They are all of one
    // object: the first lookup for a new object at that address removes the old one's.
    private mutating func removeStale(of object: AnyObject, garbage: inout Garbage) {
      let id = ObjectIdentifier(object)
      guard let first = memberships.first(of: id, where: { _ in true }), first.object !== object
      else { return }
      var stale: [Member] = []
      memberships.forEach(of: id) { stale.append($0) }
      for member in stale { detach(member, garbage: &garbage) }
    }
  }
}

// What a locked registry operation removed, released by the caller after unlocking.
struct Garbage {
  // An operation that releases anything releases a member, its chain and the chain's other
  // member, most often: room for three inline, with no allocation.
  private var first: AnyObject?
  private var second: AnyObject?
  private var third: AnyObject?
  // The rest: more members, and a released chain's filters, sinks and queued changes.
  private var more: [Any] = []
  // Chains a member left and that are still active: their dead members are pruned after
  // unlocking.
  var touched: [AnyChain] = []
  // Members the sweep found, whose objects are checked after unlocking.
  var swept: [Member] = []

  mutating func release(_ object: AnyObject) {
    if first == nil {
      first = object
    } else if second == nil {
      second = object
    } else if third == nil {
      third = object
    } else {
      more.append(object)
    }
  }

  mutating func release(_ userState: Any) {
    more.append(userState)
  }

  // Call after unlocking.
  func pruneTouchedChains() {
    for chain in touched where chain.isActive { chain.pruneDeadMembers() }
  }
}

// What the registry knows of one shared key path (`MemberThunks.isSharedKeyPath`), while one of
// its accesses is shared. A class: the registry updates it in place. Guarded by the registry's
// lock.
final class KeyPathFacts {
  // Its read touched no @Bound property, on an object of exactly its root type.
  @exclusivity(unchecked) var isPlain = false
  // The accesses members added through it share (MemberAccess.swift): one per chain type and
  // recipe, most often one.
  @exclusivity(unchecked) private var shared: [(key: MemberAccessKey, access: MemberAccess)] = []

  var sharedCount: Int { shared.count }

  func access(for key: MemberAccessKey) -> MemberAccess? {
    shared.first { $0.key == key }?.access
  }

  func share(_ access: MemberAccess, as key: MemberAccessKey) {
    guard self.access(for: key) == nil else { return }
    shared.append((key, access))
    access.isShared = true
  }

  func unshare(_ access: MemberAccess) {
    shared.removeAll { $0.access === access }
    access.isShared = false
  }
}
