// Adding members: find out whether the property is observable, build the member, attach it
// (join, move or replace), then give it the chain's current value. The one non-inlinable step
// behind every public member-adding function; it runs only when binding.
extension ChainCore {
  // How a new member learns about changes.
  @usableFromInline
  enum Source {
    // Probe for @Bound storage (and install a token there).
    case property
    // A control bound with `on:`: subscribe the member to the event.
    case control((Member) -> Void)

    @inlinable
    static func subscribing<Control: ControlEventSource>(
      _ control: Control, _ event: Control.Event
    ) -> Self {
      .control { [weak control] member in control?.controlEvents.subscribe(member, to: event) }
    }
  }

  // Starts a chain from `(object, keyPath)`, or joins the chain it is a member of
  // (Docs/Semantics.md, "Chains and members").
  @usableFromInline
  static func makeHead<Object: AnyObject>(
    _ object: Object, _ keyPath: KeyPath<Object, Value>, role: MemberRole, source: Source,
    isolation: (any Actor)?, thunks: MemberThunks<Value, Object, Value>
  ) -> ChainCore<Value> {
    let registry = Registry.current
    let key = sharingKey(keyPath, thunks)
    // Again when another thread bound, moved or unbound the property between the look-up and
    // the attach: this call then does what it would have done a moment later, joining the chain
    // the property is in now, if any (Docs/Semantics.md, "Join and move").
    while true {
      let lookup = registry.lookUp(object, keyPath, askingIfPlain: false, sharing: key)
      let existing = lookup.member
      if let existing, let chain = existing.chain as? ChainCore<Value>, chain.isUsable {
        let joined = chain.add(
          object, keyPath, role: role, source: source, isolation: isolation, thunks: thunks,
          joining: true)
        if joined { return chain }
        continue
      }
      let value: Value
      var probe: BoundProbe?
      switch source {
      case .property:
        (value, probe) = BoundProbe.read(
          object, keyPath, through: thunks.read, sends: role.sends)
      case .control: value = thunks.read(object)
      }
      let head = access(
        keyPath, storage: probe?.storageKeyPath, thunks: thunks, previous: nil, carried: false,
        shared: (lookup.access, key))
      let chain = ChainCore(
        registry: registry, id: Registry.makeChainID(for: object), head: head.access,
        current: value)
      _ = chain.admits(isolation, adding: chain.code.description)
      guard chain.mayTake(existing, from: isolation) else {
        probe?.undoInstall(in: object, storage: Bound<Value>.self)
        registry.release(chain, as: .lastSenderGone)
        return chain
      }
      let attached = chain.attach(
        object, keyPath, role: role, source: source, probe: probe, thunks: thunks,
        access: head, isHead: true, seen: Registry.Seen(member: existing))
      guard attached else {
        registry.release(chain, as: .lastSenderGone)
        continue
      }
      if chain.hasNoMembers { registry.release(chain, as: .lastSenderGone) }
      return chain
    }
  }

  @usableFromInline
  func add<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, role: MemberRole, source: Source,
    isolation: (any Actor)?, thunks: MemberThunks<Value, Object, Target>
  ) {
    add(
      object, keyPath, role: role, source: source, isolation: isolation, thunks: thunks,
      joining: false)
  }

  // `joining`: a chain's start joins this chain (`makeHead`), which starts again, and false is
  // returned, when the chain ended or the property's membership changed since it was looked up.
  @discardableResult
  private func add<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, role: MemberRole, source: Source,
    isolation: (any Actor)?, thunks: MemberThunks<Value, Object, Target>, joining: Bool
  ) -> Bool {
    // Named as its current membership names it, if it has one; a `@Bound` property otherwise by
    // its storage, which only a read finds (the token that read installs is taken out again).
    func label() -> String {
      if let label = registry.member(of: object, keyPath: keyPath)?.label {
        return label.description
      }
      var storage: AnyKeyPath?
      if case .property = source {
        let probe = BoundProbe.read(object, keyPath, through: thunks.read, sends: false).probe
        storage = probe.storageKeyPath
        probe.undoInstall(in: object, storage: Bound<Target>.self)
      }
      return MemberLabel(keyPath: keyPath, storageKeyPath: storage).description
    }
    guard isActive else {
      if joining { return false }
      report(BindingError(chain: code, member: label(), cause: .chainInactive))
      return true
    }
    // Looked up once: for the isolation check, and for a property added again to this chain.
    // A receiving member of a plain property needs no probe: only the property's own @Bound
    // storage would matter, and a read that touched no @Bound property found none
    // (Docs/Architecture.md, "Finding the @Bound storage").
    let isExactRoot = thunks.isSharedKeyPath && type(of: object) == Object.self
    let mayBePlain = !role.sends && isExactRoot
    let key = Self.sharingKey(keyPath, thunks)
    let lookup = registry.lookUp(
      object, keyPath, askingIfPlain: mayBePlain, askingIfControl: isExactRoot, sharing: key)
    let (existing, isPlain) = (lookup.member, lookup.isPlain)
    // Isolated to the caller's actor only once the member is known to be added (below).
    guard mayTake(existing, from: isolation) else { return true }
    // Before the probe installs a token: pruning may release this chain, or run a deinit that
    // binds this property.
    pruneDeadMembers(amortized: true)
    // Its membership of this chain, if it is added again: the roles unite (Docs/Semantics.md,
    // "Join and move"). Still attached after the pruning, or not used.
    let previous = existing.flatMap { $0.chain === self && $0.isAttached ? $0 : nil }
    var probe: BoundProbe?
    var foundPlain = false
    if case .property = source {
      // A sending member added again keeps sending: probe for what it observes.
      let sends = role.sends || previous?.role.sends == true
      if sends || !isPlain {
        let found = BoundProbe.read(object, keyPath, through: thunks.read, sends: sends).probe
        foundPlain = !sends && mayBePlain && found.touchedNothing
        probe = found
      }
    }
    return attach(
      object, keyPath, role: role, source: source, probe: probe, previous: previous,
      thunks: thunks, shared: (lookup.access, key), foundPlain: foundPlain,
      control: (lookup.isControl, isExactRoot), isolation: isolation,
      seen: joining ? Registry.Seen(member: existing) : nil)
  }

  // A new member's access (MemberAccess.swift), and the key it is to be shared under, when it is
  // the first for that key. Nothing of the caller's in the closures: those of the first member
  // attached with them serve, when its property had the same storage (a subclass may override a
  // property). A property added again to its chain combines its closures: an access of its own.
  static func access<Object, Target>(
    _ keyPath: KeyPath<Object, Target>, storage: AnyKeyPath?,
    thunks: MemberThunks<Value, Object, Target>, previous: Member?, carried: Bool,
    shared: (access: MemberAccess?, key: MemberAccessKey?)
  ) -> (access: MemberAccess, sharing: MemberAccessKey?) {
    if previous == nil, let key = shared.key {
      // By identity: a wrapper's storage key path is a literal, one object.
      if let access = shared.access, access.storageKeyPath === storage { return (access, nil) }
      let access = MemberAccess(
        keyPath: keyPath, storageKeyPath: storage, write: thunks.write, send: thunks.send)
      return (access, key)
    }
    // Not `??`: through its generic parameter, the closures would come back wrapped in
    // reabstraction thunks, two more calls on every write and send.
    var writeThunk = thunks.write
    if writeThunk == nil { writeThunk = previous?.write }
    var sendThunk = thunks.send
    if let send = thunks.send, carried {
      // A control's events carried over: the new closures send what the control holds, read
      // when it fires (the options given last, Docs/Semantics.md, "Join and move").
      let read = thunks.read
      sendThunk = { object, value, member in
        if let value { return send(object, value, member) }
        guard let object else { return }
        var target = read(unsafeDowncast(object, to: Object.self))
        withUnsafeMutablePointer(to: &target) { send(object, UnsafeRawPointer($0), member) }
      }
    } else if sendThunk == nil {
      sendThunk = previous?.send
    }
    let access = MemberAccess(
      keyPath: keyPath, storageKeyPath: storage, write: writeThunk, send: sendThunk)
    return (access, nil)
  }

  // What members built with `thunks` for `keyPath` share, when they may (MemberAccess.swift).
  static func sharingKey<Object, Target>(
    _ keyPath: KeyPath<Object, Target>, _ thunks: MemberThunks<Value, Object, Target>
  ) -> MemberAccessKey? {
    guard thunks.isSharedKeyPath, let recipe = thunks.recipe else { return nil }
    return MemberAccessKey(
      keyPath: ObjectIdentifier(keyPath), value: ObjectIdentifier(Value.self), recipe: recipe)
  }

  // Whether code isolated to `caller` may move a property here from the chain it is in:
  // not out of a chain isolated to another actor (Docs/Semantics.md, "Isolation").
  // `existing` is the membership the registry holds for the property.
  func mayTake(_ existing: Member?, from caller: (any Actor)?) -> Bool {
    guard let caller, let existing,
      existing.chain !== self, existing.chain.isActive, let isolation = existing.chain.isolation,
      !isolation.isActor(caller), !isolation.isActorGone
    else { return true }
    let cause = BindingError.Cause.isolationMismatch(
      chain: isolation.name, caller: ChainIsolation.name(of: caller))
    report(BindingError(chain: code, member: existing.label.description, cause: cause))
    return false
  }

  // False only when `seen`, the membership the caller looked up, is no longer the property's, or
  // the chain ended meanwhile: nothing was added, and the caller starts again (`makeHead`).
  @discardableResult
  private func attach<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, role: MemberRole, source: Source,
    probe: BoundProbe?, previous: Member? = nil, thunks: MemberThunks<Value, Object, Target>,
    shared: (access: MemberAccess?, key: MemberAccessKey?) = (nil, nil),
    access prepared: (access: MemberAccess, sharing: MemberAccessKey?)? = nil,
    foundPlain: Bool = false, control: (known: Bool?, isExactRoot: Bool) = (nil, false),
    isolation: (any Actor)? = nil, isHead: Bool = false, seen: Registry.Seen? = nil
  ) -> Bool {
    let isObservable: Bool
    switch source {
    case .property: isObservable = probe.map { $0.installed || $0.isTracked } ?? false
    case .control: isObservable = true
    }
    // Added again to its own chain (`previous`): the roles unite, and each closure is the one
    // given last that does the job (Docs/Semantics.md, "Join and move").
    // A set of the property before this join whose re-read waits goes with the member replaced:
    // the new one reads back what that re-read would have read.
    let rereads = previous?.tracked?.hasRereadQueued == true
    // A sending role carried over keeps sending: a `@Bound` property's new member has its token,
    // and a control's takes over the events the previous member was subscribed to, with the
    // previous member's send closure, which reads the control.
    var carried: ((Member) -> Void)?
    if let previous, previous.role.sends, case .property = source {
      carried = carriedEvents(of: previous, on: object)
    }
    let made: (access: MemberAccess, sharing: MemberAccessKey?)
    if let prepared {
      made = prepared
    } else {
      made = Self.access(
        keyPath, storage: probe?.storageKeyPath, thunks: thunks, previous: previous,
        carried: carried != nil, shared: shared)
    }
    let (access, sharing) = made
    let member = Member(object: object, access: access, chain: self, role: role)
    // Reported at bind time, once attached (a start that starts again reports it once); the
    // member still receives when it can.
    let sendsUnobserved = role.sends && !isObservable && carried == nil
    if sendsUnobserved {
      guard member.write != nil else {
        report(
          member.error(.notObservable, outcome: "its key path is read-only: it was not bound"))
        return true
      }
      member.role = .out
    }
    if let previous { member.role = member.role.united(with: previous.role) }
    // Last of the checks: a refused addition changes nothing, the chain's isolation included
    // (Docs/Semantics.md, "Isolation").
    guard admits(isolation, adding: member.label.description) else {
      probe?.undoInstall(in: object, storage: Bound<Target>.self)
      return true
    }
    // The registry links the token to the member once the member is attached, under its lock.
    if let probe, probe.installed { member.token = probe.memberToken }
    // Skipped by deliveries until its initial sync is done (`syncNewMember`).
    if member.role.receives && !isHead { member.pendingChanges.store(1, ordering: .relaxed) }
    // A control's death must end the membership; a token already does. Whether the object is
    // one is remembered with its key path for objects of exactly its root type.
    var isControl: Bool?
    if case .property = source, !member.hasToken || carried != nil {
      isControl = control.known ?? (object is any ControlEventSource)
    }
    let noted = control.isExactRoot && control.known == nil ? isControl : nil
    // A nested path or a computed property: observe what reading it touched (its source is set
    // before the member is published; `startTracking` below).
    let isTracked = probe?.isTracked == true && member.role.sends
    if isTracked, let probe {
      makeTracked(
        member, of: object, reading: thunks.read, comparing: thunks.isEqual,
        firstRead: probe.firstRead, watch: probe.observationTicket, isBoundPath: probe.isBoundPath,
        receivesFirstValue: member.role.receives && !isHead, ownToken: probe.inheritedToken,
        objectToken: probe.objectToken, replacing: previous?.tracked)
    }
    // Its events end the membership in its deinit (`subscribe` or `trackControl` below).
    var endsWithControl = isControl == true
    if case .control = source { endsWithControl = true }
    if endsWithControl, case .plain = member.source { member.kind = .control }
    let outcome = registry.attach(
      member, object: object, sharing: sharing, isPlain: foundPlain, isControl: noted, seen: seen)
    if sendsUnobserved && (outcome == .attached || outcome == .chainReleased) {
      report(member.error(.notObservable, outcome: "it only receives"))
    }
    switch outcome {
    case .attached: break
    case .chainInactive:
      // Released meanwhile, by another thread: nothing is added, and the property keeps the
      // token, and so the membership, it had.
      probe?.undoInstall(in: object, storage: Bound<Target>.self)
      member.tracked?.end()
      if seen != nil { return false }
      report(member.error(.chainInactive))
      return true
    case .raced:
      // The property was bound, moved or unbound by another thread since the caller looked it
      // up: nothing is added, and the caller looks again. A token its probe installed stays: the
      // member attached meanwhile may have found it there and taken it, and the caller's next
      // attempt takes it again.
      member.tracked?.end()
      return false
    case .chainReleased:
      return true
    }
    if isTraced { trace(.memberAdded(member: member.label.description, role: "\(member.role)")) }
    if isTracked {
      startTracking(
        member, adopting: probe?.observationTicket, joined: previous != nil,
        rereads: rereads && !member.role.receives)
    }
    if case .control(let subscribe) = source {
      subscribe(member)
    } else if let isControl {
      if isControl { trackControl(object, member: member) }
      carried?(member)
    }
    // Initial sync (Docs/Semantics.md, "Initial sync"); the head is where the current value
    // came from.
    if member.role.receives && !isHead {
      syncNewMember(
        member, rejoined: previous.map(Self.holdsItsLatest) ?? false, rereads: rereads)
    }
    // A token this one replaced (kept by the probe) dies only after the new member is attached.
    withExtendedLifetime(probe) {}
    return true
  }
}

extension ChainCore {
  // A member added again to its chain (a join): whether its property holds the chain's value,
  // or a newer one of its own still on its way to the chain (`syncNewMember`).
  static func holdsItsLatest(_ previous: Member) -> Bool {
    previous.role.receives || previous.pendingChanges.load(ordering: .relaxed) > 0
      || previous.tracked?.hasRereadQueued == true
  }
}

// The identity of an owned sink's membership: `(owner, \OwnedSinkKey.[key])`, a key path per key,
// equal for equal keys, so that the registry joins, moves and unbinds it like a property.
struct OwnedSinkKey {
  subscript(_ key: String) -> Void { () }

  static func keyPath(_ key: String) -> AnyKeyPath { \OwnedSinkKey.[key] }
}

extension ChainCore {
  // Adds (or moves here) the sink `(owner, key)` (Docs/Semantics.md, "Sinks that follow their
  // owner").
  func addOwnedSink<Owner: AnyObject>(
    _ owner: Owner, key: String, initial: Bool, isolation: (any Actor)?,
    sink: @escaping (Owner, Value) -> Void
  ) {
    let keyPath = OwnedSinkKey.keyPath(key)
    let label = "out(\(Owner.self), key: \"\(key)\")"
    guard isActive else {
      report(BindingError(chain: code, member: label, cause: .chainInactive))
      return
    }
    guard admits(isolation, adding: label),
      isolation == nil || mayTake(registry.member(of: owner, keyPath: keyPath), from: isolation)
    else { return }
    pruneDeadMembers(amortized: true)
    let access = MemberAccess(
      keyPath: keyPath, storageKeyPath: nil,
      write: { object, value, _ in
        sink(
          unsafeDowncast(object, to: Owner.self), value.assumingMemoryBound(to: Value.self).pointee)
      },
      send: nil)
    let member = Member(object: owner, access: access, chain: self, role: .out)
    member.kind = .sink
    // Not called by deliveries until its first call, made in the delivery's order: a sink added
    // while another thread delivers sees the changes in order (Docs/Semantics.md, "Sinks").
    // Without one, it takes every delivery from now on (`addSink`).
    if initial { member.pendingChanges.store(1, ordering: .relaxed) }
    switch registry.attach(member, object: owner) {
    case .attached: break
    case .chainInactive:
      report(BindingError(chain: code, member: label, cause: .chainInactive))
      return
    case .chainReleased, .raced:  // raced: only a head's attach
      return
    }
    guard initial else { return }
    serialize(toActor: false, workKey: .firstValue(of: member)) { [self] in
      member.pendingChanges.store(0, ordering: .relaxed)
      guard member.isAttached, let owner = member.object else { return }
      if isTraced { trace(.sinkCalled(key: tracedName(of: member))) }
      var dead = DeadMembers()
      withExtendedLifetime(owner) { write(currentValue, to: member, dead: &dead) }
    }
  }
}
