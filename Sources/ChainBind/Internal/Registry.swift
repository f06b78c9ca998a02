import Synchronization

// Every membership by object, for join, move and unbind, and the number of active chains. A
// chain is held by its members, and found from its code (`ChainCode.chain`).
//
// Only binding, unbinding, deallocation and pruning come here; a change (set -> members) never
// does. The memberships are in shards by their object's address, each with its own lock, so that
// binding and releasing unrelated objects on several threads rarely waits (Docs/Architecture.md,
// "The registry"). An operation waits for a shard's lock only while it holds none: holding one,
// it may take another shard's lock only if free (`withLockIfAvailable`), so no two threads wait
// for each other; the memberships of a released chain in other shards are ended in theirs so, or
// after unlocking. Lock order: a shard's lock, then a chain's lock. Nothing removed under a lock is released under it: removed members, chains and
// user closures are handed back as `Garbage` and dropped after unlocking, because their deinits
// may run user code that binds or unbinds.
@usableFromInline
final class Registry: Sendable {
  static let shared = Registry()

  // Lets tests work in a registry of their own, so process-wide counts stay exact while other
  // tests run in parallel. Read only when binding, never on the hot path.
  @TaskLocal static var scoped: Registry?

  // How many scopes are open: with none (outside ChainBind's tests), binding skips the
  // task-local read.
  static let openScopes = Atomic<Int>(0)

  static var current: RegistryReference {
    if openScopes.load(ordering: .relaxed) == 0 { return sharedReference }
    return RegistryReference(scoped ?? shared)
  }

  // `shared`, loaded without a retain.
  static let sharedReference = RegistryReference(shared)

  // How many shards. A thread binding and releasing in a loop reuses the same few addresses, so
  // two such threads whose objects meet in one shard meet there on every cycle: with 256, that
  // is about 1 run in 30 for a cycle that touches three objects per thread (1 in 2.3 with 16).
  static let shardCount = 256

  private let shardObjects = (0..<Registry.shardCount).map { Shard(Tables(index: $0)) }
  // The same, used without a retain and release per operation: `shardObjects` holds them.
  private let shards: [Unretained<Shard>]

  init() {
    shards = shardObjects.map { Unretained($0) }
  }

  // A chain's number, unique in the process (a test's scoped registry draws from the same
  // counters), from the counter of its head object's shard: threads binding unrelated objects
  // write no common word. A shard's numbers end in its index.
  static func makeChainID(for object: AnyObject) -> UInt64 {
    let index = shard(of: ObjectIdentifier(object))
    let count = shared.shards[index].with {
      $0.chainNumbers.wrappingAdd(1, ordering: .relaxed).oldValue
    }
    return count &* UInt64(shardCount) &+ UInt64(index)
  }

  var activeChainCount: Int {
    shardObjects.reduce(0) { $0 + $1.chainCount.load(ordering: .relaxed) }
  }

  // How many accesses members share (Bind+Testing.swift).
  var sharedAccessCount: Int {
    shardObjects.reduce(0) { count, shard in
      count + shard.withLock { $0.keyPaths.values.reduce(0) { $0 + $1.sharedCount } }
    }
  }

  // The shard of an object's memberships. From the middle bits of the product the membership
  // table hashes by its top bits: within a shard, the table's slots stay evenly used.
  static func shard(of id: ObjectIdentifier) -> Int {
    let product = UInt(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15
    return Int(truncatingIfNeeded: product >> 32) & (shardCount - 1)
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
    // Whether objects of exactly `keyPath`'s root type are controls (`ControlEventSource`), when
    // asked and known.
    var isControl: Bool?
  }

  func lookUp(
    _ object: AnyObject, _ keyPath: AnyKeyPath, askingIfPlain: Bool, askingIfControl: Bool = false,
    sharing key: MemberAccessKey?
  ) -> Lookup {
    withGarbage(of: ObjectIdentifier(object), pruningTouched: false) { tables, garbage in
      var lookup = Lookup(
        member: tables.membership(of: object, keyPath: keyPath, garbage: &garbage))
      if askingIfPlain || askingIfControl || key != nil, let facts = tables.facts(of: keyPath) {
        lookup.isPlain = askingIfPlain && facts.isPlain
        lookup.access = key.flatMap { facts.access(for: $0) }
        if askingIfControl { lookup.isControl = facts.rootIsControl }
      }
      return lookup
    }
  }

  // How many shared accesses no attached member uses are kept for the next member of their call
  // site, at most, in each shard.
  static let idleAccessLimit = 32

  // The membership a property had when looked up, nil when none (`attach`).
  struct Seen {
    let member: Member?
  }

  enum AttachOutcome {
    case attached
    // The chain was released before the member could join it.
    case chainInactive
    // The member replaced the chain's last sender with a member that does not send, so the
    // chain was released.
    case chainReleased
    // A chain's start (a new head, or a join): the property's membership is no longer the one
    // its caller looked up (another thread bound, moved or unbound it meanwhile). Nothing was
    // attached: the caller looks again (`ChainCore.makeHead`).
    case raced
  }

  // Makes `member` a member of its chain, moving `(object, keyPath)` out of any other chain or
  // replacing it in place in the same chain. Counts the chain when it is new. With `key`, the
  // member's access becomes the one members of that key share, unless one already is.
  // `isPlain`: reading the member's key path, shared, from an object of exactly its root type
  // touched no @Bound property; noted with the access it shares. `isControl`: whether objects of
  // exactly the key path's root type are controls, noted likewise. `seen`, for a chain's start
  // (a new head, or a join): the membership the property had when its caller looked it up.
  func attach(
    _ member: Member, object: AnyObject, sharing key: MemberAccessKey? = nil, isPlain: Bool = false,
    isControl: Bool? = nil, seen: Seen? = nil
  ) -> AttachOutcome {
    let (outcome, next) = withGarbage(of: ObjectIdentifier(object), pruningTouched: true) {
      tables, garbage in
      let outcome = tables.attach(
        member, object: object, sharing: key, isPlain: isPlain, isControl: isControl, seen: seen,
        garbage: &garbage)
      tables.sweep(garbage: &garbage, sparing: member)
      return (outcome, tables.nextShardToSweep())
    }
    // Every eighth attach, as much of another shard, in turn, unless another thread holds it:
    // memberships left where nothing binds any more end too.
    guard let next else { return outcome }
    var garbage = Garbage()
    let swept: Void? = shards[next].with {
      $0.withLockIfAvailable { $0.sweep(garbage: &garbage) }
    }
    if swept != nil { finish(garbage, in: next, pruningTouched: false) }
    return outcome
  }

  // How many slots of its shard's table each attach sweeps for members whose objects are gone:
  // more than the one membership an attach adds, so that memberships nothing saw die (a plain
  // member, a tracked one whose observed objects live on) cannot pile up, whatever the churn.
  static let sweepStride = 4

  // Removes one membership (its token or control died, or it was unbound).
  func detach(_ member: Member) {
    withGarbage(of: member.objectID, pruningTouched: true) { tables, garbage in
      tables.detach(member, garbage: &garbage)
    }
  }

  // Removes members whose objects are gone.
  @usableFromInline
  func prune(_ members: [Member]) {
    for member in members {
      withGarbage(of: member.objectID, pruningTouched: false) { tables, garbage in
        tables.detach(member, garbage: &garbage)
      }
    }
  }

  func unbind(_ object: AnyObject) {
    withGarbage(of: ObjectIdentifier(object), pruningTouched: true) { tables, garbage in
      tables.detachAll(of: object, garbage: &garbage)
    }
  }

  func unbind(_ object: AnyObject, keyPath: AnyKeyPath) {
    withGarbage(of: ObjectIdentifier(object), pruningTouched: true) { tables, garbage in
      if let member = tables.membership(of: object, keyPath: keyPath, garbage: &garbage) {
        tables.detach(member, garbage: &garbage)
      }
    }
  }

  // Releases `chain`, under no shard's lock: each of its members is ended in its own shard.
  func release(_ chain: AnyChain, as end: ChainEnd) {
    var garbage = Garbage()
    if let members = Tables.deactivate(chain, as: end, garbage: &garbage) {
      for member in members where member.isAttached { garbage.endElsewhere(member) }
    }
    finish(garbage, in: Self.shard(of: ObjectIdentifier(chain)), pruningTouched: false)
  }

  // Runs `body` under the lock of `id`'s shard. What it removes goes into `garbage` and is
  // released only after unlocking; with `pruningTouched`, the chains that removed members left
  // are then pruned of their dead members (not for `prune` itself, nor for a release, which
  // empties the chain).
  private func withGarbage<Result>(
    of id: ObjectIdentifier, pruningTouched: Bool, _ body: (inout Tables, inout Garbage) -> Result
  ) -> Result {
    let shard = Self.shard(of: id)
    var garbage = Garbage()
    let result = shards[shard].with {
      $0.withLock { tables -> Result in
        let result = body(&tables, &garbage)
        if garbage.hasElsewhere { endElsewhereIfFree(&garbage) }
        return result
      }
    }
    finish(garbage, in: shard, pruningTouched: pruningTouched)
    return result
  }

  // A shard's lock held: ends the members of released chains whose shards no other thread holds
  // now, taking their locks without waiting (so that no two threads can wait for each other);
  // the rest stay for `finish`. The chains are inactive: ending a member releases nothing more.
  // Only the first such member, most often the only one: the others wait for `finish`.
  private func endElsewhereIfFree(_ garbage: inout Garbage) {
    guard let member = garbage.takeFirstElsewhere() else { return }
    let ended: Void? = shards[Self.shard(of: member.objectID)].with {
      $0.withLockIfAvailable { $0.detach(member, garbage: &garbage) }
    }
    if ended == nil { garbage.endElsewhere(member) }
  }

  // After unlocking: counts the chains counted or released, ends the memberships of released
  // chains in their own shards, prunes, and releases what the operation removed.
  private func finish(_ garbage: Garbage, in shard: Int, pruningTouched: Bool) {
    if garbage.chainsCounted != 0 {
      _ = shards[shard].with { $0.chainCount.add(garbage.chainsCounted, ordering: .relaxed) }
    }
    if let member = garbage.firstElsewhere { detach(member) }
    // Most operations leave none of the rest: one check.
    if garbage.hasRare {
      garbage.forEachMoreElsewhere { detach($0) }
      if pruningTouched { garbage.pruneTouchedChains() }
    }
    withExtendedLifetime(garbage) {}
  }
}

extension Registry {
  // One shard: its lock, its tables and its counters, in one object padded on both sides, so
  // that no other shard's words (nor anything else's) share their cache lines: threads working
  // in different shards write no common line.
  //
  // @unchecked Sendable: `tables` is touched only inside `withLock`.
  private final class Shard: @unchecked Sendable {
    private let lead = CacheLinePadding()
    private let mutex = PlatformMutex(alone: true)
    @exclusivity(unchecked) private var tables: Tables
    // The chains counted less the chains released by operations in this shard (only the sum
    // over the shards means anything).
    let chainCount = Atomic<Int>(0)
    // Numbers of the chains whose head object is in this shard, the next first (only the
    // process-wide registry's are used).
    let chainNumbers = Atomic<UInt64>(1)
    private let trail = CacheLinePadding()

    init(_ tables: Tables) {
      self.tables = tables
    }

    // `body` must not run user code, nor release anything whose deinit might (`Garbage`).
    func withLock<Result>(_ body: (inout Tables) -> Result) -> Result {
      mutex.lock()
      defer { mutex.unlock() }
      return body(&tables)
    }

    // As `withLock`, when no other thread holds the lock; nil, without running `body`, when one
    // does.
    func withLockIfAvailable<Result>(_ body: (inout Tables) -> Result) -> Result? {
      guard mutex.tryLock() else { return nil }
      defer { mutex.unlock() }
      return body(&tables)
    }
  }

  // The state of one shard of the registry, only ever touched under its lock.
  private struct Tables {
    // Which shard.
    let index: Int
    // Every attached member of the shard's objects, by its object.
    var memberships = MembershipTable()
    // What is known of shared key paths (`MemberThunks.isSharedKeyPath`), by identity: a literal
    // without subscript arguments, which the runtime keeps, or a key path passed in a variable.
    // An entry lives while one of its shared accesses does, and they hold the key path: its
    // address names no other meanwhile.
    var keyPaths: [ObjectIdentifier: KeyPathFacts] = [:]
    // Shared accesses that no attached member used when their last one ended: kept for the next
    // member of their call site, up to `Registry.idleAccessLimit` in each shard, so that a key
    // path made at run time (and its subscript arguments) is not kept for good. Members share
    // the accesses of their object's shard, which count them under its lock. The least recently used goes first,
    // nearly: an access used again since it was queued gets a second chance at the back (the
    // clock algorithm), which costs a change of its flag and no move per reuse.
    private var idle: ContiguousArray<MemberAccess> = []

    init(index: Int) {
      self.index = index
    }

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
      isControl: Bool?, seen: Seen?, garbage: inout Garbage
    ) -> AttachOutcome {
      let chain = member.chain
      guard chain.isActive else { return .chainInactive }
      let existing = membership(of: object, keyPath: member.keyPath, garbage: &garbage)
      if let seen, existing !== seen.member { return .raced }
      let replaced = existing.flatMap { $0.chain === chain ? $0 : nil }
      // Into the chain first, under its lock: a chain released meanwhile (from another shard, or
      // none) takes nothing, and the property stays where it was. Once in, a release takes the
      // member with the chain's others.
      let inserted = chain.insert(member, replacing: replaced)
      if case .inactive = inserted { return .chainInactive }
      if let existing {
        // Joined or moved: the token goes to the new member at once.
        if let token = member.token, token === existing.token {
          token.handOver(from: existing, to: member)
        }
        end(existing, garbage: &garbage)
        if existing === replaced {
          // Replaced in its own chain: what waited for it goes (the new member waits anew).
          let waited = chain.withLock { held in
            held.queuedCount > 0 ? chain.takeWork(of: existing, held) : nil
          }
          if let waited { garbage.release(waited) }
        } else if existing.chain !== chain {
          if existing.chain.isTraced {
            garbage.release(TraceNote.removed(existing, movingAway: true))
          }
          removeFromChain(existing, garbage: &garbage)
        }
      }
      memberships.insert(member)
      if let key { share(member.access, as: key) }
      if member.access.isShared {
        if member.access.isIdle { member.access.wasUsedAgain = true }
        member.access.attachedMembers += 1
        if isPlain || isControl != nil, let facts = keyPaths[ObjectIdentifier(member.keyPath)] {
          if isPlain { facts.isPlain = true }
          if let isControl { facts.rootIsControl = isControl }
        }
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
      // Under the chain's lock, like its release: a chain is counted once, and uncounted once.
      let isNew = chain.withLock { held -> Bool in
        guard chain.isActive, !held.isCounted else { return false }
        held.isCounted = true
        return true
      }
      if isNew { garbage.chainsCounted += 1 }
      if case .lastSenderReplaced = inserted {
        release(chain, garbage: &garbage)
        return .chainReleased
      }
      return .attached
    }

    // The other shard an attach here sweeps next, each in turn, and the attaches since.
    private var sweptShard = 0
    private var attachesSinceSweep = 0

    // Every eighth attach here: the other shard to sweep.
    mutating func nextShardToSweep() -> Int? {
      attachesSinceSweep += 1
      guard attachesSinceSweep == 8 else { return nil }
      attachesSinceSweep = 0
      sweptShard = (sweptShard + 1) & (Registry.shardCount - 1)
      if sweptShard == index { sweptShard = (sweptShard + 1) & (Registry.shardCount - 1) }
      return sweptShard
    }

    // Ends the memberships, in the next `Registry.sweepStride` slots, whose objects are gone and
    // that nothing else ends (no token nor control; not a tracked member that ends with its
    // object's token); not `attached`, the member just attached. A live object loaded goes to
    // the caller, to be released after unlocking, where its deinit may run; its member is not
    // retained past the lock, so a chain that ends meanwhile releases its closures at once.
    mutating func sweep(garbage: inout Garbage, sparing attached: Member? = nil) {
      var gone: [Member] = []
      memberships.sweep(Registry.sweepStride) { member in
        guard !member.isEndedByItsObject, member !== attached,
          !member.endsWithItsObject(orUnread: true)
        else { return }
        if let object = member.object { garbage.release(object) } else { gone.append(member) }
      }
      for member in gone { detach(member, garbage: &garbage) }
    }

    // The chain first: a thread that finds the member ended (`TrackedSource.endIfObjectGone`,
    // without this lock) finds its chain ended too, if it was its last sender.
    mutating func detach(_ member: Member, garbage: inout Garbage, isInTable: Bool = true) {
      guard member.isAttached else { return }
      if member.chain.isTraced { garbage.release(TraceNote.removed(member, movingAway: false)) }
      removeFromChain(member, garbage: &garbage)
      SchedulePoint.reachUnderLock()
      end(member, garbage: &garbage, isInTable: isInTable)
    }

    // Every membership of `object` (Docs/Semantics.md, "Lifetime": O(members of the chains it
    // touches), however many memberships the object has).
    mutating func detachAll(of object: AnyObject, garbage: inout Garbage) {
      removeStale(of: object, garbage: &garbage)
      for member in memberships.removeAll(of: ObjectIdentifier(object)) {
        detach(member, garbage: &garbage, isInTable: false)
      }
    }

    // A membership ends: out of the table (unless taken out already), unlinked from its token
    // and its observed properties, and released by the caller after unlocking.
    private mutating func end(_ member: Member, garbage: inout Garbage, isInTable: Bool = true) {
      if isInTable { memberships.remove(member) }
      member.markDetached()
      garbage.release(member)
      memberEnded(member, garbage: &garbage)
    }

    // A chain whose last sending member left is released (Docs/Semantics.md, "Lifetime").
    private mutating func removeFromChain(_ member: Member, garbage: inout Garbage) {
      let chain = member.chain
      guard chain.isActive else { return }
      if chain.remove(member, garbage: &garbage) {
        release(chain, garbage: &garbage)
      } else {
        garbage.touch(chain)
      }
    }

    // Releases `chain`: its members in this shard end now; the others are handed to the
    // caller, which ends them in their own shards after unlocking (meanwhile they are still
    // attached, to a chain that is no longer active).
    mutating func release(_ chain: AnyChain, garbage: inout Garbage) {
      guard let members = Self.deactivate(chain, as: .lastSenderGone, garbage: &garbage) else {
        return
      }
      for member in members where member.isAttached {
        if Registry.shard(of: member.objectID) == index {
          end(member, garbage: &garbage)
        } else {
          garbage.endElsewhere(member)
        }
      }
    }

    // Marks `chain` inactive and empties it, under its lock, which also counts chains
    // (`attach`): returns its members, or nil when it was released already. Any shard's lock
    // or none may be held.
    static func deactivate(
      _ chain: AnyChain, as end: ChainEnd, garbage: inout Garbage
    ) -> MemberList? {
      let wasCounted = chain.withLock { held -> Bool? in
        guard chain.isActive else { return nil }
        chain.markInactive(end)
        return held.isCounted
      }
      guard let wasCounted else { return nil }
      if wasCounted { garbage.chainsCounted -= 1 }
      garbage.release(chain)
      let (members, userState) = chain.takeEverything()
      if let userState { garbage.release(userState) }
      return members
    }

    // The membership of `(object, keyPath)`. The caller holds `object`, so the memberships under
    // its identifier either are its own or belong to a dead object whose address was reused.
    mutating func membership(
      of object: AnyObject, keyPath: AnyKeyPath, garbage: inout Garbage
    ) -> Member? {
      removeStale(of: object, garbage: &garbage)
      // Past a few memberships of the object, hashes first: an object bound through thousands of
      // key paths (a subscript per cell) then compares a few, not all (Docs/Semantics.md,
      // "Lifetime").
      var compared = 0
      var hash: Int?
      return memberships.first(of: ObjectIdentifier(object)) { member in
        compared += 1
        guard compared > Self.comparedDirectly else { return member.keyPath == keyPath }
        let wanted = hash ?? keyPath.hashValue
        hash = wanted
        return member.access.keyPathHash == wanted && member.keyPath == keyPath
      }
    }

    // Memberships of one object whose key paths a lookup compares without hashing.
    static let comparedDirectly = 8

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

// A registry, reached without reference counting: every chain holds one, and binding and
// releasing on several threads would otherwise write the shared registry's reference count
// several times per cycle. The process-wide registry lives for good; a chain retains a test's
// scoped one (`retainIfScoped`) for its life.
@usableFromInline
struct RegistryReference: Sendable {
  @usableFromInline let reference: Unretained<Registry>

  init(_ registry: Registry) { reference = Unretained(registry) }

  // Whether this is a test's scoped registry: then the chain that keeps this reference retains it.
  private var isScoped: Bool { reference.address != Registry.sharedReference.reference.address }
  func retainIfScoped() { if isScoped { reference.retain() } }
  func releaseIfScoped() { if isScoped { reference.release() } }

  var activeChainCount: Int { reference.with { $0.activeChainCount } }
  func member(of object: AnyObject, keyPath: AnyKeyPath) -> Member? {
    reference.with { $0.member(of: object, keyPath: keyPath) }
  }
  func lookUp(
    _ object: AnyObject, _ keyPath: AnyKeyPath, askingIfPlain: Bool, askingIfControl: Bool = false,
    sharing key: MemberAccessKey?
  ) -> Registry.Lookup {
    reference.with {
      $0.lookUp(
        object, keyPath, askingIfPlain: askingIfPlain, askingIfControl: askingIfControl,
        sharing: key)
    }
  }
  func attach(
    _ member: Member, object: AnyObject, sharing key: MemberAccessKey? = nil, isPlain: Bool = false,
    isControl: Bool? = nil, seen: Registry.Seen? = nil
  ) -> Registry.AttachOutcome {
    reference.with {
      $0.attach(
        member, object: object, sharing: key, isPlain: isPlain, isControl: isControl, seen: seen)
    }
  }
  func detach(_ member: Member) { reference.with { $0.detach(member) } }
  @usableFromInline
  func prune(_ members: [Member]) { reference.with { $0.prune(members) } }
  // Prunes the members a delivery found gone, and leaves `dead` empty.
  @inlinable
  func prune(_ dead: inout DeadMembers) {
    if let members = dead.take() { prune(members) }
  }
  func unbind(_ object: AnyObject) { reference.with { $0.unbind(object) } }
  func unbind(_ object: AnyObject, keyPath: AnyKeyPath) {
    reference.with { $0.unbind(object, keyPath: keyPath) }
  }
  func release(_ chain: AnyChain, as end: ChainEnd) {
    reference.with { $0.release(chain, as: end) }
  }
}

// What a locked registry operation removed, released by the caller after unlocking.
struct Garbage {
  // An operation that releases anything releases a member, its chain and the chain's other
  // member, most often: room for three inline, with no allocation.
  private var first: AnyObject?
  private var second: AnyObject?
  private var third: AnyObject?
  // A member of a released chain in another shard, ended in its own after unlocking: a released
  // chain most often has one.
  private var elsewhere: Member?
  // Chains counted (positive) or released (negative) by the operation.
  var chainsCounted = 0
  // What most operations never have, in one field: a garbage made and dropped several times per
  // binding then costs one check to destroy.
  private var rare: Rare?

  private struct Rare {
    // More members, and a released chain's filters, sinks and queued changes.
    var more: [Any] = []
    // Chains a member left and that are still active: their dead members are pruned after
    // unlocking.
    var touched: [AnyChain] = []
    var elsewhere: [Member] = []
  }

  // Changes the rare part, made on first use; moved out and back, so its arrays are not copied.
  private mutating func withRare(_ body: (inout Rare) -> Void) {
    var part = rare ?? Rare()
    rare = nil
    body(&part)
    rare = part
  }

  mutating func endElsewhere(_ member: Member) {
    if elsewhere == nil {
      elsewhere = member
    } else {
      withRare { $0.elsewhere.append(member) }
    }
  }

  var hasElsewhere: Bool { elsewhere != nil }

  // The first member to end elsewhere, taken out; the others move up.
  mutating func takeFirstElsewhere() -> Member? {
    guard let first = elsewhere else { return nil }
    elsewhere = nil
    if rare?.elsewhere.isEmpty == false {
      var next: Member?
      withRare { next = $0.elsewhere.removeFirst() }
      elsewhere = next
    }
    return first
  }

  var firstElsewhere: Member? { elsewhere }

  var hasRare: Bool { rare != nil }

  // The members to end elsewhere after `firstElsewhere`.
  func forEachMoreElsewhere(_ body: (Member) -> Void) {
    guard let rare else { return }
    for member in rare.elsewhere { body(member) }
  }

  mutating func touch(_ chain: AnyChain) { withRare { $0.touched.append(chain) } }

  mutating func release(_ object: AnyObject) {
    if first == nil {
      first = object
    } else if second == nil {
      second = object
    } else if third == nil {
      third = object
    } else {
      withRare { $0.more.append(object) }
    }
  }

  mutating func release(_ userState: Any) {
    withRare { $0.more.append(userState) }
  }

  // Call after unlocking.
  func pruneTouchedChains() {
    guard let touched = rare?.touched else { return }
    for chain in touched where chain.isActive { chain.pruneDeadMembers(amortized: true) }
  }
}

// What the registry knows of one shared key path (`MemberThunks.isSharedKeyPath`), while one of
// its accesses is shared. A class: the registry updates it in place. Guarded by the registry's
// lock.
final class KeyPathFacts {
  // Its read touched no @Bound property, on an object of exactly its root type.
  @exclusivity(unchecked) var isPlain = false
  // Whether objects of exactly its root type are controls, once one was bound: the conformance
  // lookup costs about 290 instructions, and writes a word the runtime's lookups on every thread
  // share.
  @exclusivity(unchecked) var rootIsControl: Bool?
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
