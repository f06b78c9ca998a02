import Synchronization

@usableFromInline
enum MemberRole: UInt8, Sendable {
  case `in`, out, `inout`

  @inlinable var sends: Bool { self != .out }
  @inlinable var receives: Bool { self != .in }

  // Both roles together: a property added again to its chain keeps what it had.
  func united(with other: MemberRole) -> MemberRole {
    self == other ? self : .inout
  }
}

// What a member's changes come from besides its object. One field: a tracked member is one
// whose read is not a single `@Bound` property, so it has no token of its own.
enum MemberSource {
  case plain
  // Unretained: see `Member.token`.
  case token(Unretained<BoundToken>)
  case tracked(TrackedSource)
}

// One membership: a property of an object in a chain. Not generic: what depends on the types is
// in its access (`MemberAccess`), built at the call site where they were specialized.
//
// @unchecked Sendable: the registry (any thread) holds members. `attached` and `pendingChanges`
// are atomic; `role`, the access and `source` are set before changes reach the member;
// `isWriting` is touched by the thread writing this member as its chain, which the caller
// confines, or, in an isolated chain, on its actor (like `changesOnActor`) and by the thread that
// writes a new member's initial sync (Docs/Semantics.md, "Threading" and "Isolation").
@usableFromInline
final class Member: @unchecked Sendable {
  // Never retains the member's object (Docs/Semantics.md, "Lifetime"). Like every field below
  // with one owner, not checked for exclusive access at run time: the check costs more than the
  // rest of a write.
  @usableFromInline @exclusivity(unchecked) weak var object: AnyObject?
  let objectID: ObjectIdentifier
  // The key path and the closures: often shared with members added at the same call site.
  @usableFromInline let access: MemberAccess
  @usableFromInline let chain: AnyChain
  // The token in the `@Bound` property's storage, or what a tracked member observes.
  @exclusivity(unchecked) var source: MemberSource = .plain
  // Changes of this member waiting in its chain's queue. Changed under the chain lock; read by
  // the delivering thread, which must not overwrite a member's newer, queued value. With
  // `ordinal`, one word.
  @usableFromInline let pendingChanges = Atomic<Int32>(0)
  // An owned sink's place among its chain's sinks, set under the chain lock when inserted; for
  // a member that sends, the changes it made on its chain's actor, counted there (Isolation.swift).
  // One field: an owned sink never sends.
  @exclusivity(unchecked) private var ordinal: UInt32 = 0
  // How many sets of the member's `@Bound` property use it without a retain right now (up to
  // 16 383 at once); in bit 14, `isOverwritten`; in the high bit, that its token ended the
  // membership (BoundToken.swift, `pin`). 16 bits: with 32, a member takes the next allocation
  // size, 16 bytes more.
  @usableFromInline let pins = Atomic<UInt16>(0)
  @usableFromInline @exclusivity(unchecked) var role: MemberRole
  // Set while the chain writes this member: the member's own notification of that write is not
  // a change (no echo). A `@Bound` setter notifies once and that clears the flag, so a setter
  // that sets the property again (a clamp in `didSet`) is a change; a control's events, and a
  // tracked member's notifications, are ignored until the write returns (`echoHeld`).
  // In a chain isolated to an actor, touched on the actor, and off it only by the thread that
  // writes the member as the chain (`ChainIsolation.admission`): another change made elsewhere
  // is queued before this flag is read.
  @inlinable var isWriting: Bool {
    get { writeState & 1 != 0 }
    set { if newValue { writeState = 1 } else { writeState &= 2 } }
  }
  // `isWriting` (bit 0), and whether a tracked member was notified while the chain wrote it
  // (bit 1: its setter may set several properties), which then reads its path back once the
  // write returns (`ChainCore.write`). One byte: a second field would make every member larger.
  @usableFromInline @exclusivity(unchecked) var writeState: UInt8 = 0
  @inlinable var echoHeld: Bool { writeState == 2 }
  func holdEcho() { writeState = 3 }
  @usableFromInline let attached = Atomic<Bool>(true)
  // Set before the member is published.
  @usableFromInline @exclusivity(unchecked) var kind = Kind.property
  @usableFromInline
  enum Kind: UInt8 {
    case property
    // A property of a control, whose events end the membership in its deinit.
    case control
    // An owned sink (`out(owner, key:)`): a membership of its owner, called after the members
    // are written, and not counted as a member.
    case sink
  }
  @inlinable var isSink: Bool { kind == .sink }
  // Set on the actor when the member's change was found to be made there, so that delivering it
  // does not ask again; cleared by that delivery.
  @usableFromInline @exclusivity(unchecked) var isAdmittedHere = false

  init(object: AnyObject, access: MemberAccess, chain: AnyChain, role: MemberRole) {
    self.object = object
    self.objectID = ObjectIdentifier(object)
    self.access = access
    self.chain = chain
    self.role = role
  }

  // The chain wrote this `@Bound` or control member since its last set or event: the change
  // that made, if still to be delivered, no longer is what the property holds, so its delivery
  // writes the member too (`ChainCore.receivesChange`). Set by the chain's writes, cleared by
  // sets and events, read by the delivering thread.
  @inlinable var isOverwritten: Bool { pins.load(ordering: .relaxed) & Self.overwritten != 0 }
  @usableFromInline static var overwritten: UInt16 { 1 << 14 }

  @inlinable
  func markOverwritten() { pins.bitwiseOr(Self.overwritten, ordering: .relaxed) }

  // A set of the property, or a control's event: what the chain wrote before it is gone.
  @inlinable
  func clearOverwritten() {
    if _slowPath(isOverwritten) { pins.bitwiseAnd(~Self.overwritten, ordering: .relaxed) }
  }

  // The member this thread writes outside its chain's delivery, while another thread delivers
  // (a new member's initial sync, `ChainCore.syncNewMember`): its notification is the chain's
  // own write (`ChainIsolation.admission`). Compared by address only.
  static let syncedHere = ThreadLocalPointer(.syncedMember)
  var isSyncedHere: Bool { Self.syncedHere.value == Unretained(self).address }

  // The chain's write of this tracked member returned: what it reads now is sent when it is not
  // the value written (a setter that corrects it).
  @usableFromInline
  @inline(never)
  func readBackHeldEcho() {
    writeState = 0
    tracked?.readBack(self)
  }

  // The property's identity, for join, move and unbind.
  var keyPath: AnyKeyPath { access.keyPath }
  // Copies, for the paths that are not a change (a call in place through `access` retains
  // nothing).
  var write: WriteThunk? { access.write }
  var send: SendThunk? { access.send }

  @inlinable var isAttached: Bool { attached.load(ordering: .acquiring) }
  @inlinable var pendingChangeCount: Int32 { pendingChanges.load(ordering: .relaxed) }
  // Attached, with no change of its own and no initial sync waiting: a delivery may write it.
  // A waiting change is newer than the value being delivered, and is delivered next.
  @inlinable var takesDelivery: Bool {
    isAttached && pendingChangeCount == 0
  }

  // The token of the member's `@Bound` storage. Unowned: the token lives in the object, and it
  // is reached only under its object's registry shard's lock while the member is attached, which
  // the token's deinit also takes. Kept after the membership ends, never used then.
  var token: BoundToken? {
    get {
      guard case .token(let token) = source else { return nil }
      return token.object
    }
    set { source = newValue.map { .token(Unretained($0)) } ?? .plain }
  }

  // Whether the member has a token (which ends the membership with its object), told without
  // touching the token: outside its shard's lock it may be deallocating.
  var hasToken: Bool {
    guard case .token = source else { return false }
    return true
  }

  // Whether the object's death ends the membership (a token in its storage, or its control's
  // events): nothing need load the object to see it die, which would keep it alive meanwhile.
  var isEndedByItsObject: Bool {
    if case .token = source { return true }
    return kind == .control
  }

  // A tracked member that observes a token of its own object: its end is seen without a weak
  // load of the object (`TrackedSource.endsWithItsObject`).
  func endsWithItsObject(orUnread: Bool) -> Bool {
    tracked?.endsWithItsObject(orUnread: orUnread) ?? false
  }

  // For a tracked member (Tracking.swift): what it observes. Set once, before it is attached.
  var tracked: TrackedSource? {
    get {
      guard case .tracked(let tracked) = source else { return nil }
      return tracked
    }
    set { source = newValue.map { .tracked($0) } ?? .plain }
  }

  // The member is a tracked one sending what a read that is work of its own found
  // (`TrackedSource.isSendingRead`): that work's result (`ChainCore.deliver`). Read by the
  // delivering thread.
  @usableFromInline
  var isSendingRead: Bool { tracked?.isSendingRead ?? false }

  var sinkOrder: Int32 {
    get { Int32(bitPattern: ordinal) }
    set { ordinal = UInt32(bitPattern: newValue) }
  }

  var changesOnActor: UInt32 {
    get { ordinal }
    set { ordinal = newValue }
  }

  // Registry lock held. Also unlinks the token, so that the object no longer reaches the member.
  func markDetached() {
    attached.store(false, ordering: .releasing)
    token?.detach(self)
    tracked?.end()
  }

  // Whether a change of the member goes to its chain: its role sends. A change made while it
  // was in the chain goes there even when it left meanwhile (a set on its way while another
  // thread unbound it, or replaced it by a join; a change queued for the chain's actor): no
  // update is lost (Docs/Semantics.md, "Re-entrancy"). An ended chain takes nothing.
  @inlinable var isSending: Bool { role.sends }

  // Whether a write may go ahead: conversions, `==` and getters are user code, and may have
  // unbound this member or released its chain, or let another thread set it: a change of its
  // own then waits (`pendingChanges` grew since `pending`), newer than what the write holds.
  @inlinable @inline(__always)
  func canWrite(since pending: Int32) -> Bool {
    guard isAttached && chain.isActive else { return false }
    guard _slowPath(pendingChangeCount > pending) else { return true }
    setWhileCompared()
    return false
  }

  // Not written over: a tracked member's re-read then sends what it reads even when it is the
  // last value read (the set may have restored it), so that the chain takes it. Not for the
  // initial sync written off the delivery, whose end looks for sets itself (`syncState`).
  @usableFromInline
  func setWhileCompared() {
    if !isSyncedHere { tracked?.sendNextRead() }
  }

  var label: MemberLabel { access.label }

  // An error about this member, in its chain.
  func error(_ cause: BindingError.Cause, outcome: String? = nil) -> BindingError {
    BindingError(chain: chain.code, member: label.description, cause: cause, outcome: outcome)
  }

  // A control this member is subscribed to sent the member's event.
  func controlEventDidFire() {
    // An event is a change made now: none after the member left (a delivery may keep it alive).
    guard isSending, isAttached, let send else { return }
    guard let object else {
      // The control is gone while its `controlEvents` is kept elsewhere, which would have ended
      // the membership with it (Docs/Semantics.md, "When a chain ends").
      return chain.registry.detach(self)
    }
    switch chain.isIsolated ? chain.admission(of: self, clearingEcho: false) : .nonisolated {
    case .nonisolated:
      // Only the writing thread's events are the write's echo: another thread's edit meanwhile is
      // a change (`isWriting` is that thread's to read).
      if (isSyncedHere || chain.isDeliveringHere) && isWriting { return }
    case .now: break
    case .dropped: return
    case .later:
      // Read on the actor, when the change is delivered: a control belongs to it.
      chain.isolation?.enqueue(from: self, in: chain) { [weak object] in
        self.clearOverwritten()
        send(object, nil, self)
      }
      return
    }
    // What it holds is read now: what the chain wrote before is gone.
    clearOverwritten()
    send(object, nil, self)
  }

  // Called by a thunk whose conversion failed: `value` did not convert from `from` to `to`.
  @usableFromInline
  @inline(never)
  func conversionFailed(_ value: Any, from: Any.Type, to: Any.Type, back: Bool) {
    let text = value as? String
    let shown = text.map { "\"\($0)\"" } ?? String(describing: value)
    let cause: BindingError.Cause =
      back
      ? .backConversionFailed(value: shown, from: "\(from)", to: "\(to)")
      : .conversionFailed(value: shown, from: "\(from)", to: "\(to)")
    if chain.isTraced {
      if back {
        chain.trace(
          .conversionFailed(member: chain.tracedName(of: self), value: describeValue(value)))
      } else {
        chain.noteWrite(TracedWrite.failed)
      }
    }
    chain.report(error(cause))
  }
}
