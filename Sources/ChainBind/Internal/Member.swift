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
  var isWriting = false
  private let attached = Atomic<Bool>(true)

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

  // A control this member is subscribed to sent the member's event.
  func controlEventDidFire() {}
}

// A member of a chain whose value type is `Value`.
class MemberNode<Value>: AnyMember, @unchecked Sendable {
  // Writes the chain's value into the member, converted, unless it already holds it.
  func receive(_ value: Value) -> WriteOutcome { .skipped }
}

// The one concrete member: a key path of an object, with its conversions both ways.
final class KeyPathMember<Value, Object: AnyObject, Target>: MemberNode<Value>, BoundObserver,
  @unchecked Sendable
{
  let readPath: KeyPath<Object, Target>
  let writePath: ReferenceWritableKeyPath<Object, Target>?
  // nil: the member cannot receive (an `in` member with only a `back:` conversion).
  let toMember: ((Value) -> Target?)?
  let fromMember: ((Target) -> Value?)?
  let isEqual: ((Target, Target) -> Bool)?

  init(
    object: Object, readPath: KeyPath<Object, Target>, chain: ChainCore<Value>, role: MemberRole,
    toMember: ((Value) -> Target?)?, fromMember: ((Target) -> Value?)?
  ) {
    self.readPath = readPath
    self.writePath = readPath as? ReferenceWritableKeyPath<Object, Target>
    self.toMember = toMember
    self.fromMember = fromMember
    self.isEqual = equality(for: Target.self)
    super.init(object: object, keyPath: readPath, chain: chain, role: role)
  }

  var canReceive: Bool { writePath != nil && toMember != nil }

  private var typedChain: ChainCore<Value> { unsafeDowncast(chain, to: ChainCore<Value>.self) }

  override func receive(_ value: Value) -> WriteOutcome {
    guard let writePath, let toMember else { return .skipped }
    guard let anyObject = object else { return .objectGone }
    let target = unsafeDowncast(anyObject, to: Object.self)
    guard let converted = toMember(value) else {
      return .failed(
        BindingError(
          chain: chain.code, member: label.description,
          cause: .conversionFailed(
            value: describe(value), from: "\(Value.self)", to: "\(Target.self)")))
    }
    if let isEqual, isEqual(target[keyPath: readPath], converted) { return .unchanged }
    isWriting = true
    target[keyPath: writePath] = converted
    isWriting = false
    return .written
  }

  func boundValueDidChange(_ newValue: Target) {
    guard !isWriting, role.sends, isAttached, let fromMember else { return }
    guard let value = fromMember(newValue) else {
      typedChain.report(
        BindingError(
          chain: chain.code, member: label.description,
          cause: .backConversionFailed(
            value: describe(newValue), from: "\(Target.self)", to: "\(Value.self)")))
      return
    }
    typedChain.deliver(from: self, value)
  }

  override func controlEventDidFire() {
    guard !isWriting, role.sends, isAttached, let anyObject = object else { return }
    boundValueDidChange(unsafeDowncast(anyObject, to: Object.self)[keyPath: readPath])
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
