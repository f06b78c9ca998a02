import Synchronization

// Lives in a @Bound property's storage, so it dies with the object: its deinit is the eager
// auto-unbind (there are no associated objects on Linux). It holds its member strongly (no weak
// load per set) only while the membership lasts: the registry clears it, so nothing the member
// holds stays reachable from the object after an unbind.
//
// @unchecked Sendable: `_member` and `_observers` are reachable only through `Held`, the proof
// that `lock` is held (a spin lock on every platform, so that the setter takes it inline, for
// one pointer copy).
@usableFromInline
final class BoundToken: @unchecked Sendable {
  // Touched only by `Held` (.ci/check-locks checks that nothing else names them). The member,
  // while the membership lasts; the tracked members that read this property (Tracking.swift).
  @usableFromInline @exclusivity(unchecked) var _member: Member?
  @exclusivity(unchecked) var _observers = TokenObservers.none
  // How many observers there are, for a set to check without locking.
  @usableFromInline let observerCount = Atomic<Int32>(0)
  // Last: one byte, after the words (37 bytes in all, where the fields in any other order take 48).
  @usableFromInline let lock = SpinLock()

  init() {}

  // The proof that this thread holds the token's lock, and the only way to what it guards, as
  // for a chain (`AnyChain.Held`): `acquire()` makes one, `release(_:)` consumes it.
  @usableFromInline
  struct Held: ~Copyable {
    // The token that made it, which its caller holds while this lives.
    @usableFromInline let token: Unretained<BoundToken>

    @inlinable
    init(_ token: borrowing BoundToken) { self.token = Unretained(token) }

    @inlinable var member: Member? {
      get { token.with { $0._member } }
      nonmutating set { token.with { $0._member = newValue } }
    }
    var observers: TokenObservers { token.with { $0._observers } }
    // The observer, when there is exactly one (most often): taken without copying the list.
    var onlyObserver: TrackedSource? { token.with { $0._observers.only } }

    // Changed in place, through the token without a retain: a tracked member stops observing a
    // token that may be in its deinit (waiting for the member's lock, Tracking.swift), where a
    // retain and its release would run the deinit again.
    func updateObservers<Result>(_ body: (inout TokenObservers) -> Result) -> Result {
      token.with { body(&$0._observers) }
    }
  }

  @inlinable
  final func acquire() -> Held {
    lock.lock()
    return Held(self)
  }

  @inlinable
  final func release(_ held: consuming Held) {
    _ = consume held
    lock.unlock()
  }

  // The member, while the membership lasts.
  @inlinable
  var currentMember: Member? {
    let held = acquire()
    let member = held.member
    release(held)
    return member
  }

  // Registry lock held: the member was attached.
  func attach(_ member: Member) {
    let held = acquire()
    held.member = member
    release(held)
  }

  // Registry lock held: the membership ended. The member is released by the caller, after
  // unlocking; while sets have it pinned, it keeps a retain that the last of them gives back.
  func detach(_ member: Member) {
    let held = acquire()
    if held.member === member {
      Self.end(member)
      held.member = nil
    }
    release(held)
  }

  // Registry lock held: `new` replaces `old`, in its chain (a join) or in another (a move).
  // Handed over at once, so that no set meanwhile finds no member, and goes nowhere.
  func handOver(from old: Member, to new: Member) {
    let held = acquire()
    if held.member === old {
      Self.end(old)
      held.member = new
    }
    release(held)
  }

  private static func end(_ member: Member) {
    let kept = Unretained.retained(member)
    let pins = member.pins.bitwiseOr(ended, ordering: .acquiringAndReleasing).oldValue
    if pins & ~Member.overwritten == 0 {
      kept.release()
    }
  }

  // In `Member.pins`: the membership ended (`detach`).
  @usableFromInline static var ended: UInt16 { 1 << 15 }

  // Lock held, `member` is this token's: pinned, it stays alive until `unpin` without a retain,
  // however its membership ends meanwhile (`detach`).
  @inlinable
  @inline(__always)
  static func pin(_ member: Unretained<Member>) {
    let pins = member.with { $0.pins.wrappingAdd(1, ordering: .relaxed) }
    assert(pins.oldValue & (Member.overwritten - 1) != Member.overwritten - 1, "too many pins")
  }

  @inlinable
  @inline(__always)
  static func unpin(_ member: Unretained<Member>) {
    let pins = member.with { $0.pins.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
    if _slowPath(pins.oldValue & ~Member.overwritten == ended | 1) { releaseEnded(member) }
  }

  // The last set that pinned `member` after its membership ended: the retain `detach` took.
  @usableFromInline
  @inline(never)
  static func releaseEnded(_ member: Unretained<Member>) { member.release() }

  // The property that holds `token` was set to `newValue`.
  @inlinable
  @inline(__always)
  static func didSet<Value>(_ token: Unretained<BoundToken>, _ newValue: Value) {
    token.with { $0.didSet(newValue) }
  }

  // Reached unretained (Bound.swift): after user code may have run (the tracked observers'
  // re-reads), this token is not used again. The observer check is written in each branch: a
  // single check measured 47 instructions more per set.
  @inlinable
  func didSet<Value>(_ newValue: Value) {
    let locked = acquire()
    guard let held = locked.member.map(Unretained.init) else {
      release(locked)
      return setAsNoMember(newValue)
    }
    // The chain's own write (Docs/Semantics.md, "Re-entrancy"), told under the lock, which keeps
    // the member: no retain. An isolated chain's echo is told by its admission.
    let isIsolated = held.with { $0.chain.isIsolated }
    if !isIsolated && held.with({ $0.isWriting }) {
      held.with { member in
        member.isWriting = false
        member.markOverwritten()
      }
      release(locked)
      if _slowPath(observerCount.load(ordering: .relaxed) != 0) { notifyObservers() }
      return
    }
    held.with { $0.clearOverwritten() }
    Self.pin(held)
    release(locked)
    if _slowPath(observerCount.load(ordering: .relaxed) != 0) { notifyObservers() }
    if _slowPath(isIsolated) {
      Self.sendIsolated(newValue, from: held)
    } else {
      // The member holds its access: used without a retain of its own. A chain isolated
      // meanwhile sends the change to its actor (`ChainCore.deliver`).
      held.with { member in
        Unretained(member.access).with { access in
          withUnsafePointer(to: newValue) { access.send?(nil, $0, member) }
        }
      }
    }
    Self.unpin(held)
  }

  // A change of a member of a chain isolated to an actor: made elsewhere, it is delivered later,
  // on the actor.
  @inlinable
  static func sendIsolated<Value>(_ newValue: Value, from member: Unretained<Member>) {
    member.with { member in
      // The member holds its chain: read without a retain of its own.
      switch Unretained(member.chain).with({ $0.admission(of: member, clearingEcho: true) }) {
      case .nonisolated, .now:
        Unretained(member.access).with { access in
          withUnsafePointer(to: newValue) { access.send?(nil, $0, member) }
        }
      case .later: ChainIsolation.enqueue(newValue, from: member)
      case .dropped: return
      }
    }
  }

  deinit {
    if let member = currentMember { member.chain.registry.detach(member) }
    if observerCount.load(ordering: .relaxed) != 0 { observersEnded() }
  }
}

// Non-zero while some thread is probing a property to find its @Bound storage. Getters of
// @Bound properties check it with one relaxed load and otherwise do nothing extra.
@usableFromInline
let boundProbeGate = ProbeGate()

// The gate's count, on cache lines of its own: every probe writes it, and the words linked
// next to it (other globals, metadata caches) are read by every probe on every
// thread.
@usableFromInline
struct ProbeGate: ~Copyable, Sendable {
  private let lead = CacheLinePadding()
  @usableFromInline let count = Atomic<Int>(0)
  private let trail = CacheLinePadding()
}

// Finds the @Bound storage behind `(object, keyPath)` by reading the property once: the
// wrapper's getter reports itself to the probe of the reading thread and installs the token.
@usableFromInline
final class BoundProbe: @unchecked Sendable {
  // Used only by the thread that created it, inside `read`: its fields are not checked for
  // exclusive access at run time.
  //
  // What this thread reads for: a probe's address, or a tracked member's collector's address
  // with its lowest bit set (`collect(into:_:)`; objects are at least 16-byte aligned), so that
  // a tracked member needs no probe of its own.
  private static let currentPointer = ThreadLocalPointer(.reader)

  let objectID: ObjectIdentifier
  // The member's key path; nil when the probe only collects (no key-path literal retained and
  // released per re-read: its reference count is a word every thread's re-reads would write).
  let keyPath: AnyKeyPath?
  // Every @Bound property the read touches, on any object: the dependencies of a tracked member.
  // Made when the read touches one (most member reads touch only their own property).
  @exclusivity(unchecked) private(set) var collector: DependencyCollector?
  // Whether the probe is for a member, which a token must be installed for; not when it only
  // collects what a read touches.
  let isForMember: Bool
  // The type of the property the token is for: checked before the token is used as a
  // `BoundToken<Value>`, instead of a dynamic cast.
  let valueType: Any.Type
  @exclusivity(unchecked) private(set) var visits = 0
  @exclusivity(unchecked) private(set) var installed = false
  // The read touched @Bound properties other than the member's own one-step property: the
  // member is tracked (Tracking.swift).
  @exclusivity(unchecked) private(set) var isTracked = false
  // What the read gave, for a tracked member: its first re-read tells a change made since
  // (Tracking.swift). Boxed only for tracked members.
  @exclusivity(unchecked) private(set) var firstRead: Any?
  // The key paths of the other @Bound properties a member's read touched, in order: whether the
  // member's key path is those properties one after another.
  @exclusivity(unchecked) private var pathSteps: [AnyKeyPath] = []
  // A tracked member whose key path is @Bound properties one after another (`\.a.b.c`, and no
  // `@Observable` one): a change of the last needs no new collection (Tracking.swift).
  @exclusivity(unchecked) private(set) var isBoundPath = false
  // The read accessed properties of `@Observable` classes: their callback's ticket.
  @exclusivity(unchecked) private(set) var observationTicket: ObservationTicket?
  // The read touched one @Bound property only (however often), of the member's own object and
  // type, declared in a superclass of the key path's root, which is writable: the member's own
  // property, seen through a subclass key path (`visit`), and every set of it is a change
  // (Tracking.swift, `TrackedSource.ownToken`). Its token.
  @exclusivity(unchecked) private(set) var inheritedToken: BoundToken?
  // The first @Bound property the read touched is such a property.
  @exclusivity(unchecked) private var firstStepIsInherited = false
  // The token of the first other @Bound property of the member's own object the read touched:
  // it dies with the object (`TrackedSource.endsWithItsObject`).
  @exclusivity(unchecked) private(set) var objectToken: BoundToken?
  // Every object whose @Bound property the read touched is of exactly the property's class:
  // no subclass along a path may override one with a getter of its own (`isBoundPath`).
  @exclusivity(unchecked) private var stepsAreDeclaredClasses = true
  @exclusivity(unchecked) private(set) var storageKeyPath: AnyKeyPath?
  // The token the storage held before the probe: the one an undone install puts back.
  @exclusivity(unchecked) private(set) var replacedToken: BoundToken?
  // The token the member is linked to: the storage's own when it had one (tracked members may
  // observe it, and its old membership is detached by identity), else the probe's, installed.
  @exclusivity(unchecked) private(set) var memberToken: BoundToken?

  private init(
    objectID: ObjectIdentifier, keyPath: AnyKeyPath?, isForMember: Bool, valueType: Any.Type,
    collector: DependencyCollector?
  ) {
    self.valueType = valueType
    self.objectID = objectID
    self.keyPath = keyPath
    self.isForMember = isForMember
    self.collector = collector
  }

  // The collector, made on first use.
  private var collectorInUse: DependencyCollector {
    if let collector { return collector }
    let collector = DependencyCollector()
    self.collector = collector
    return collector
  }

  // Runs `read` on this thread with `collector` told of every @Bound property read (a tracked
  // member's read).
  // The getters reach `collector` (or the probe, `run`) by address: alive meanwhile, as a
  // parameter (or `self`) is for the whole call, and every caller uses it after the read.
  static func collect<Value>(into collector: DependencyCollector, _ read: () -> Value) -> Value {
    let tagged = UInt(bitPattern: Unretained(collector).address) | 1
    return reading(UnsafeMutableRawPointer(bitPattern: tagged), read)
  }

  private func run<Value>(_ read: () -> Value) -> Value {
    Self.reading(Unretained(self).address, read)
  }

  private static func reading<Value>(_ pointer: UnsafeMutableRawPointer?, _ read: () -> Value)
    -> Value
  {
    boundProbeGate.count.add(1, ordering: .relaxed)
    defer { boundProbeGate.count.subtract(1, ordering: .relaxed) }
    let outer = currentPointer.value
    currentPointer.set(pointer)
    defer { currentPointer.set(outer) }
    return read()
  }

  // Reads `object[keyPath:]`; when it is a @Bound property of `object` without a token, installs
  // one.
  // `sends`: the member may send, so `@Observable` properties it reads matter.
  static func read<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, through read: (Object) -> Target,
    sends: Bool
  ) -> (value: Target, probe: BoundProbe) {
    let probe = BoundProbe(
      objectID: ObjectIdentifier(object), keyPath: keyPath, isForMember: true,
      valueType: Target.self,
      collector: nil)
    var value = probe.run { read(object) }
    // The @Bound properties the read touched: the member's own (installed), and the others.
    let touched = (probe.collector?.tokens.count ?? 0) + (probe.installed ? 1 : 0)
    if sends && !probe.installed && touched == 0 {
      // No @Bound property read: read again, watching for properties of `@Observable` classes
      // (the first read, for the common case, does not pay for Observation's tracking). A read
      // that touched @Bound properties is tracked anyway; its first collecting read watches for
      // them (`TrackedSource.collect`).
      let ticket: ObservationTicket?
      (value, ticket) = ObservationTicket.observing(for: nil) { read(object) }
      probe.observationTicket = ticket
    }
    let ticket = probe.observationTicket
    if probe.visits > 1 || (probe.installed && (touched > 1 || ticket != nil)) {
      // Not the one-step property alone: a computed property, or a path through other @Bound
      // properties. The member is tracked instead.
      probe.installed = false
      probe.storageKeyPath = nil
    }
    probe.isTracked = !probe.installed && (touched > 0 || ticket != nil)
    if probe.isTracked { probe.firstRead = value }
    if probe.isTracked, touched == 1, probe.firstStepIsInherited,
      keyPath is ReferenceWritableKeyPath<Object, Target>
    {
      probe.inheritedToken = probe.collector?.tokens.first?.object
    }
    if probe.isTracked, ticket == nil, probe.pathSteps.count > 1, probe.stepsAreDeclaredClasses,
      probe.pathSteps.count == probe.collector?.tokens.count, probe.readsPath(keyPath)
    {
      probe.isBoundPath = true
    }
    return (value, probe)
  }

  // Whether `keyPath` is the properties the read touched, one after another: once bound, they
  // are all the key path reads.
  private func readsPath(_ keyPath: AnyKeyPath) -> Bool {
    var path: AnyKeyPath? = pathSteps[0]
    for step in pathSteps.dropFirst() { path = path?.appending(path: step) }
    // The same path built two ways differs in where its "reference prefix" ends, which `==`
    // compares and a read does not depend on. The hash covers the rest `==` compares: the key
    // path's class, and each component and its type (a computed one by its accessor). Describing
    // both, to compare them exactly, tripled the cost of binding a nested path.
    return path?.hashValue == keyPath.hashValue
  }

  // The read touched no @Bound property at all, on any object.
  var touchedNothing: Bool { visits == 0 && collector == nil }

  // Puts back the token the probe replaced: the member it was installed for was not added.
  // Called on the binding thread, which owns `object`'s storage.
  func undoInstall<Object: AnyObject, Target>(in object: Object, storage: Bound<Target>.Type) {
    guard installed else { return }
    // A match by key path: the storage's root is the member's `Object`.
    if let storage = storageKeyPath as? ReferenceWritableKeyPath<Object, Bound<Target>> {
      let stripe = TokenStripe.lock(for: object)
      // Unless another chain's tracked member reached the token meanwhile: it observes it (under
      // this stripe, `BoundProbe.visit`), and would miss every later set.
      if object[keyPath: storage].token?.observerCount.load(ordering: .relaxed) ?? 0 == 0 {
        object[keyPath: storage].token = replacedToken
      }
      stripe.unlock()
    }
    installed = false
  }

  // What this thread reads for right now (`currentPointer`), if it is probing or collecting.
  @usableFromInline
  @inline(never)
  static func reader() -> UnsafeMutableRawPointer? {
    currentPointer.value
  }

  // The key paths come as autoclosures: the inlined getter then forms them only on this cold
  // path. Passed as values, they were formed (and released) on every read, before the gate check.
  // `existing` is the storage's token, read by the getter. Returns the token to install in the
  // storage, which has none: the getter stores it, where the storage's key path is a literal that
  // folds into a direct store. Reading a property stays a read for other threads otherwise.
  @usableFromInline
  @inline(never)
  static func visit<EnclosingSelf: AnyObject, Value>(
    _ address: UnsafeMutableRawPointer, _ instance: EnclosingSelf,
    wrapped wrappedKeyPath: @autoclosure () -> ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath:
      @autoclosure () -> ReferenceWritableKeyPath<EnclosingSelf, Bound<Value>>,
    token existing: UnsafeRawPointer?
  ) -> BoundToken? {
    // `address` is `reader()`, alive: the reading thread holds it while it reads. `existing`
    // stays in the storage while the caller holds the object's stripe.
    let existing = existing.map { Unretained<BoundToken>(address: $0) }
    let bits = UInt(bitPattern: address)
    if bits & 1 != 0, let collector = UnsafeRawPointer(bitPattern: bits & ~1) {
      // A tracked member's read (the common case): every property is a dependency.
      let isDeclaredClass = type(of: instance) == EnclosingSelf.self
      return Unretained<DependencyCollector>(address: collector).with {
        $0.visit(existing, isDeclaredClass: isDeclaredClass)
      }
    }
    return Unretained<BoundProbe>(address: address).with { probe in
      probe.visit(
        instance, wrapped: wrappedKeyPath(), storage: storageKeyPath(), token: existing?.object)
    }
  }

  private func visit<EnclosingSelf: AnyObject, Value>(
    _ instance: EnclosingSelf,
    wrapped wrappedKeyPath: @autoclosure () -> ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath:
      @autoclosure () -> ReferenceWritableKeyPath<EnclosingSelf, Bound<Value>>,
    token existing: BoundToken?
  ) -> BoundToken? {
    // Any other @Bound property the read touches is a dependency of a tracked member: the
    // storage is written only to give it a token it lacks. Only the member's own property, by
    // key path: through a subclass key path, an inherited property and an override of it look
    // the same (the key path names the declaring class), so both are tracked. A read-only
    // computed property over it alone is told from them by its key path; one with a setter is
    // not (Docs/Semantics.md, "What is observable").
    let step = wrappedKeyPath()
    guard objectID == ObjectIdentifier(instance), step == keyPath else {
      if pathSteps.isEmpty, objectID == ObjectIdentifier(instance), valueType == Value.self,
        let root = keyPath.map({ type(of: $0).rootType }), root != EnclosingSelf.self
      {
        firstStepIsInherited = root is EnclosingSelf.Type
      }
      let isDeclaredClass = type(of: instance) == EnclosingSelf.self
      if !isDeclaredClass { stepsAreDeclaredClasses = false }
      pathSteps.append(step)
      let installing = collectorInUse.visit(
        existing.map { Unretained($0) }, isDeclaredClass: isDeclaredClass)
      if objectToken == nil, objectID == ObjectIdentifier(instance) {
        objectToken = existing ?? installing
      }
      return installing
    }
    visits += 1
    // The member's closures take a value of the member's type: only a property of that type.
    guard visits == 1, valueType == Value.self else { return nil }
    let previous = existing
    let installing = previous == nil ? BoundToken() : nil
    memberToken = previous ?? installing
    replacedToken = previous
    installed = true
    self.storageKeyPath = storageKeyPath()
    return installing
  }
}
