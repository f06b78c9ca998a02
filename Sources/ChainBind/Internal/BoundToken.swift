import Synchronization

// Lives in a @Bound property's storage, so it dies with the object: its deinit is the eager
// auto-unbind (there are no associated objects on Linux). It holds its member strongly, so a set
// reaches the chain without loading a weak reference; the member holds its object weakly, so
// there is no cycle. A released chain's member stays reachable from here until the object is
// deallocated or its property is bound again; `isSending` then stops every change.
@usableFromInline
final class BoundToken<Value> {
  // Set once, by the binding thread, before the member is published: not checked for
  // exclusive access at run time (the check would cost a fifth of a set).
  @usableFromInline @exclusivity(unchecked) var member: Member?
  // nil when the member cannot send (an `out` member, or no `back:` conversion).
  @usableFromInline let send: ((Value, Member) -> Void)?

  @usableFromInline
  init(send: ((Value, Member) -> Void)?) {
    self.send = send
  }

  @inlinable
  func didSet(_ newValue: Value) {
    guard let member else { return }
    if member.isWriting {
      // The chain's own write (Docs/Semantics.md, "No loops, no echoes").
      member.isWriting = false
      return
    }
    send?(newValue, member)
  }

  deinit {
    if let member { member.chain.registry.detach(member) }
  }
}

// Non-zero while some thread is probing a property to find its @Bound storage. Getters of
// @Bound properties check it with one relaxed load and otherwise do nothing extra.
@usableFromInline
let boundProbeGate = Atomic<Int>(0)

// Finds the @Bound storage behind `(object, keyPath)` by reading the property once: the
// wrapper's getter reports itself to the probe of the reading thread and installs the token.
@usableFromInline
final class BoundProbe: @unchecked Sendable {
  // Used only by the thread that created it, inside `read`.
  private static let currentPointer = ThreadLocalPointer()
  static var current: BoundProbe? {
    currentPointer.value.map { Unmanaged<BoundProbe>.fromOpaque($0).takeUnretainedValue() }
  }

  let objectID: ObjectIdentifier
  let keyPath: AnyKeyPath
  let rootType: Any.Type
  let token: AnyObject?
  // The type of the property the token is for: checked before the token is used as a
  // `BoundToken<Value>`, instead of a dynamic cast.
  let valueType: Any.Type
  private(set) var visits = 0
  private(set) var installed = false
  private(set) var storageKeyPath: AnyKeyPath?
  // Keeps a replaced token (and so its old membership) alive until the new member is attached.
  private(set) var replacedToken: AnyObject?
  // For a match through a subclass key path: the storage's value, to check against what the key
  // path read (a subclass's computed property over one inherited @Bound property is no match).
  private var inheritedStoredValue: Any?
  private var undo: (() -> Void)?

  private init(
    objectID: ObjectIdentifier, keyPath: AnyKeyPath, token: AnyObject?, valueType: Any.Type
  ) {
    self.valueType = valueType
    self.objectID = objectID
    self.keyPath = keyPath
    self.rootType = type(of: keyPath).rootType
    self.token = token
  }

  // Reads `object[keyPath:]`; when it is a @Bound property of `object`, installs `token`.
  static func read<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, through read: (Object) -> Target,
    installing token: BoundToken<Target>?
  ) -> (value: Target, probe: BoundProbe) {
    let probe = BoundProbe(
      objectID: ObjectIdentifier(object), keyPath: keyPath, token: token, valueType: Target.self)
    boundProbeGate.add(1, ordering: .relaxed)
    defer { boundProbeGate.subtract(1, ordering: .relaxed) }
    let outer = currentPointer.value
    currentPointer.set(Unmanaged.passUnretained(probe).toOpaque())
    defer { currentPointer.set(outer) }
    let value = withExtendedLifetime(probe) { read(object) }
    if let inherited = probe.inheritedStoredValue, !isEqual(inherited, value) {
      probe.visits += 1
    }
    if probe.visits > 1 {
      // A computed property that reads several @Bound properties is not observable.
      probe.undo?()
      probe.installed = false
      probe.storageKeyPath = nil
    }
    probe.undo = nil
    probe.inheritedStoredValue = nil
    return (value, probe)
  }

  // Whether `stored` is a `Target` equal to `value` (true when `Target` is not Equatable). Out of
  // line: its `Target?` would make every read look up that type's metadata.
  @inline(never)
  private static func isEqual<Target>(_ stored: Any, _ value: Target) -> Bool {
    guard var stored = stored as? Target, Target.self is any Equatable.Type else { return true }
    var value = value
    return bindIsEqual(&stored, &value)
  }

  // The key paths come as autoclosures: the inlined getter then forms them only on this cold
  // path. Passed as values, they were formed (and released) on every read, before the gate check.
  // `bound` is the property's storage, reached by the getter directly (no key-path projection).
  @usableFromInline
  @inline(never)
  static func visit<EnclosingSelf: AnyObject, Value>(
    _ instance: EnclosingSelf,
    wrapped wrappedKeyPath: @autoclosure () -> ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath:
      @autoclosure () -> ReferenceWritableKeyPath<EnclosingSelf, Bound<Value>>,
    bound: inout Bound<Value>
  ) {
    guard let probe = current, probe.objectID == ObjectIdentifier(instance) else { return }
    // The member's own property, or the same property reached through a subclass key path.
    let isInherited = probe.rootType != EnclosingSelf.self && probe.rootType is EnclosingSelf.Type
    guard isInherited || wrappedKeyPath() == probe.keyPath else { return }
    probe.visits += 1
    guard probe.visits == 1, probe.valueType == Value.self, let token = probe.token else { return }
    let previous = bound.token
    bound.token = unsafeDowncast(token, to: BoundToken<Value>.self)
    probe.replacedToken = previous
    probe.installed = true
    let storage = storageKeyPath()
    probe.storageKeyPath = storage
    // Only a match through a subclass key path can be followed by another match (a computed
    // property of the subclass reading inherited @Bound properties): then it may be undone.
    // A match by key path is the property itself.
    guard isInherited else { return }
    probe.inheritedStoredValue = bound.value
    // Run only inside `read`, which holds the object: no weak reference, which would give the
    // object a side table and make every later retain and release of it slower.
    probe.undo = { [unowned(unsafe) instance] in instance[keyPath: storage].token = previous }
  }
}
