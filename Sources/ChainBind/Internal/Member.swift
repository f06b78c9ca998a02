import Synchronization

enum MemberRole: UInt8, Sendable {
  case `in`, out, `inout`

  var sends: Bool { self != .out }
  var receives: Bool { self != .in }
}

enum WriteOutcome {
  case written
  case unchanged
  case skipped
  case objectGone
  case failed(BindingError)
}

// What the registry and the chains need of any member, whatever its types.
//
// @unchecked Sendable: the registry (any thread) holds members. `nextInObject` is guarded by
// the registry lock, `attached` is atomic, `role` is fixed before the member is published, and
// `isWriting` is touched only by the thread delivering to this member's object, which the
// caller confines (DESIGN §6.1).
class AnyMember: @unchecked Sendable {
  let objectID: ObjectIdentifier
  // Never retains the member's object (DESIGN §5.1).
  weak var object: AnyObject?
  let keyPath: AnyKeyPath
  let chain: AnyChain
  var role: MemberRole
  var storageKeyPath: AnyKeyPath?
  var nextInObject: AnyMember?
  // Set while the chain writes this member. The member's own notification of that write is
  // not a change (no echo): a @Bound setter notifies exactly once and that notification clears
  // the flag, so a setter that then sets the property again (a clamp in `didSet`) is a change;
  // a control's events are ignored until the write returns.
  var isWriting = false
  private let attached = Atomic<Bool>(true)
  // Changes of this member waiting in its chain's queue. Changed under the chain lock; read by
  // the delivering thread, which must not overwrite a member's newer, queued value.
  let pendingChanges = Atomic<Int>(0)

  init(object: AnyObject, keyPath: AnyKeyPath, chain: AnyChain, role: MemberRole) {
    self.objectID = ObjectIdentifier(object)
    self.object = object
    self.keyPath = keyPath
    self.chain = chain
    self.role = role
  }

  var isAttached: Bool { attached.load(ordering: .acquiring) }

  func markDetached() { attached.store(false, ordering: .releasing) }

  var label: MemberLabel { MemberLabel(keyPath: keyPath, storageKeyPath: storageKeyPath) }

  // An error about this member, in its chain.
  func error(_ cause: BindingError.Cause) -> BindingError {
    BindingError(chain: chain.code, member: label.description, cause: cause)
  }

  // A control this member is subscribed to sent the member's event.
  func controlEventDidFire() {}
}

// A member of a chain whose value type is `Value`.
class MemberNode<Value>: AnyMember, @unchecked Sendable {
  // Writes the chain's value into the member, converted, unless it already holds it.
  func receive(_ value: Value) -> WriteOutcome { .skipped }
}

// How to read and write a member's property.
struct MemberAccess<Object: AnyObject, Target> {
  let keyPath: KeyPath<Object, Target>
  // nil when the key path is read-only; then the member can neither receive nor be reverted.
  let writableKeyPath: ReferenceWritableKeyPath<Object, Target>?

  static func writable(_ keyPath: ReferenceWritableKeyPath<Object, Target>) -> Self {
    Self(keyPath: keyPath, writableKeyPath: keyPath)
  }

  // A key path typed read-only may still be writable; then a rejected change can be reverted.
  static func readable(_ keyPath: KeyPath<Object, Target>) -> Self {
    Self(keyPath: keyPath, writableKeyPath: keyPath as? ReferenceWritableKeyPath<Object, Target>)
  }

  var isWritable: Bool { writableKeyPath != nil }

  func read(_ object: Object) -> Target { object[keyPath: keyPath] }

  func write(_ value: Target, to object: Object) {
    guard let writableKeyPath else { return }
    object[keyPath: writableKeyPath] = value
  }

  // Names a one-component key path that prints only as `<computed …>`: the stored property of
  // `object` with the member's exact type, or, when several have it, the one with its current
  // value. Returns nil when that does not single one out; labels then show `<computed T>`.
  func storedPropertyName(in object: Object) -> String? {
    let path = MemberLabel.path(of: keyPath)
    // A settable one only: a read-only computed property is not stored, so it is never named
    // after a stored property that happens to hold the same value.
    guard writableKeyPath != nil, path.hasPrefix("<computed "), path.hasSuffix(">"),
      !path.contains(".")
    else {
      return nil
    }
    var candidates: [(name: String, value: Target)] = []
    var mirror: Mirror? = Mirror(reflecting: object)
    while let current = mirror {
      for child in current.children {
        guard let name = child.label, type(of: child.value) == Target.self,
          let value = child.value as? Target
        else { continue }
        candidates.append((name, value))
      }
      mirror = current.superclassMirror
    }
    if candidates.count == 1 { return candidates[0].name }
    guard let isEqual = equality(for: Target.self) else { return nil }
    let value = read(object)
    let matches = candidates.filter { isEqual($0.value, value) }
    return matches.count == 1 ? matches[0].name : nil
  }
}

// The one concrete member: a property of an object, with its conversions both ways.
final class KeyPathMember<Value, Object: AnyObject, Target>: MemberNode<Value>, BoundObserver,
  @unchecked Sendable
{
  let access: MemberAccess<Object, Target>
  let isWritable: Bool
  let conversion: any MemberConversion<Value, Target>
  let isEqual: ((Target, Target) -> Bool)?

  init(
    object: Object, access: MemberAccess<Object, Target>, chain: ChainCore<Value>,
    role: MemberRole, conversion: any MemberConversion<Value, Target>
  ) {
    self.access = access
    self.isWritable = access.isWritable
    self.conversion = conversion
    self.isEqual = equality(for: Target.self)
    super.init(object: object, keyPath: access.keyPath, chain: chain, role: role)
  }

  var canReceive: Bool { isWritable && conversion.converts }

  override var label: MemberLabel {
    MemberLabel(
      keyPath: keyPath, storageKeyPath: storageKeyPath,
      resolvedPath: object.flatMap {
        storageKeyPath == nil
          ? access.storedPropertyName(in: unsafeDowncast($0, to: Object.self)) : nil
      })
  }

  private var typedChain: ChainCore<Value> { unsafeDowncast(chain, to: ChainCore<Value>.self) }

  override func receive(_ value: Value) -> WriteOutcome {
    guard isWritable, conversion.converts else { return .skipped }
    guard let anyObject = object else { return .objectGone }
    let target = unsafeDowncast(anyObject, to: Object.self)
    guard let converted = conversion.toMember(value) else {
      return .failed(
        error(
          .conversionFailed(value: describe(value), from: "\(Value.self)", to: "\(Target.self)")))
    }
    if let isEqual, isEqual(access.read(target), converted) { return .unchanged }
    // The conversion and the getter are user code: they may have unbound this member.
    guard isAttached, chain.isActive else { return .skipped }
    isWriting = true
    access.write(converted, to: target)
    isWriting = false
    return .written
  }

  func boundValueDidChange(_ newValue: Target) {
    if isWriting {
      isWriting = false
      return
    }
    send(newValue)
  }

  private func send(_ newValue: Target) {
    guard role.sends, isAttached, conversion.convertsBack else { return }
    guard let value = conversion.toChain(newValue) else {
      typedChain.report(
        error(
          .backConversionFailed(
            value: describe(newValue), from: "\(Target.self)", to: "\(Value.self)")))
      return
    }
    typedChain.deliver(from: self, value)
  }

  override func controlEventDidFire() {
    guard !isWriting, role.sends, isAttached, let anyObject = object else { return }
    send(access.read(unsafeDowncast(anyObject, to: Object.self)))
  }
}

private func describe<T>(_ value: T) -> String {
  if let text = value as? String { return "\"\(text)\"" }
  return String(describing: value)
}

// `==` for `Target` when it is Equatable, found once at bind time.
func equality<Target>(for type: Target.Type) -> ((Target, Target) -> Bool)? {
  guard let equatable = type as? any Equatable.Type else { return nil }
  return { lhs, rhs in
    withUnsafePointer(to: lhs) { lhsPointer in
      withUnsafePointer(to: rhs) { rhsPointer in
        equatable.bindIsEqual(UnsafeRawPointer(lhsPointer), UnsafeRawPointer(rhsPointer))
      }
    }
  }
}

extension Equatable {
  // Both pointers point at initialized values of `Self` (the caller's `Target`).
  fileprivate static func bindIsEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
    lhs.assumingMemoryBound(to: Self.self).pointee == rhs.assumingMemoryBound(to: Self.self).pointee
  }
}
