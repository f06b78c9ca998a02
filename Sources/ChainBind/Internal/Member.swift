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
  // Word-sized properties first, the byte-sized ones last: less padding per member.
  let objectID: ObjectIdentifier
  // Never retains the member's object (DESIGN §5.1).
  // The stored properties below are not checked for exclusive access at run time: each has
  // the one owner the comment above names, and the checks would cost about a quarter of a set.
  @exclusivity(unchecked) weak var object: AnyObject?
  let keyPath: AnyKeyPath
  let chain: AnyChain
  @exclusivity(unchecked) var storageKeyPath: AnyKeyPath?
  @exclusivity(unchecked) var nextInObject: AnyMember?
  // Changes of this member waiting in its chain's queue. Changed under the chain lock; read by
  // the delivering thread, which must not overwrite a member's newer, queued value.
  let pendingChanges = Atomic<Int>(0)
  @exclusivity(unchecked) var role: MemberRole
  // Set while the chain writes this member. The member's own notification of that write is
  // not a change (no echo): a @Bound setter notifies exactly once and that notification clears
  // the flag, so a setter that then sets the property again (a clamp in `didSet`) is a change;
  // a control's events are ignored until the write returns.
  @exclusivity(unchecked) var isWriting = false
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
  // false when the key path is read-only; then the member can neither receive nor be reverted.
  let isWritable: Bool

  static func writable(_ keyPath: ReferenceWritableKeyPath<Object, Target>) -> Self {
    Self(keyPath: keyPath, isWritable: true)
  }

  // A key path typed read-only may still be writable; then a rejected change can be reverted.
  static func readable(_ keyPath: KeyPath<Object, Target>) -> Self {
    Self(keyPath: keyPath, isWritable: keyPath is ReferenceWritableKeyPath<Object, Target>)
  }

  var writableKeyPath: ReferenceWritableKeyPath<Object, Target>? {
    isWritable ? unsafeDowncast(keyPath, to: ReferenceWritableKeyPath<Object, Target>.self) : nil
  }

  func read(_ object: Object) -> Target { object[keyPath: keyPath] }

  func write(_ value: consuming Target, to object: Object) {
    guard let writableKeyPath else { return }
    object[keyPath: writableKeyPath] = value
  }

  // The byte offset of the property inside `object` when the key path names one stored
  // property of it directly (no observers, no accessors, no further components) and `Target` is
  // a trivial type, else nil.
  //
  // Writing such a property through its key path costs a call into the standard library's
  // key-path interpreter and one allocation (the record of the access for the run-time
  // exclusivity check); at a known offset it is a plain store, with the same effect: a stored
  // property without observers has no setter code to run. Trivial types only (no reference
  // counting: `_isPOD`): a write in place is not checked for exclusivity, and if your code held
  // an overlapping access to the property, a reference-counted value could be released under it;
  // a trivial value can at worst be overwritten.
  //
  // Only key paths that print as `\Object.name` qualify: the standard library on Linux prints
  // computed components (observers, accessors, overridable properties) as `<computed …>`. On
  // Apple platforms it may name computed components after their accessors, so nothing qualifies
  // there. The offset is taken once, by projecting the property's address through the key path,
  // which for a stored property runs no code, and cached per key path (`FieldOffsets`): a property
  // that qualifies sits at the same offset in every instance.
  func storedFieldOffset(in object: Object) -> Int? {
    #if canImport(Darwin)
      return nil
    #else
      guard let writableKeyPath, _isPOD(Target.self) else { return nil }
      return FieldOffsets.shared.offset(of: writableKeyPath) {
        guard Self.namesOneStoredProperty(writableKeyPath) else { return nil }
        return Self.projectedOffset(of: writableKeyPath, in: object)
      }
    #endif
  }

  // Whether the key path prints as `\Object.name`: one component, a stored property.
  private static func namesOneStoredProperty(_ keyPath: AnyKeyPath) -> Bool {
    let name = MemberLabel.path(of: keyPath)
    guard let first = name.first, first == "_" || first.isLetter else { return false }
    return name.allSatisfy { $0 == "_" || $0.isLetter || $0.isNumber }
  }

  // Where a stored property lives in `object`: its address, projected through its key path
  // (no code runs for a stored property), minus the object's. Nil unless it lies past the object
  // header and is aligned for `T`.
  static func projectedOffset<T>(
    of keyPath: ReferenceWritableKeyPath<Object, T>, in object: Object
  ) -> Int? {
    let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    let offset = withUnsafeMutablePointer(to: &object[keyPath: keyPath]) {
      UnsafeRawPointer($0) - base
    }
    guard offset >= 2 * MemoryLayout<Int>.size, offset < 1 << 20,
      offset % MemoryLayout<T>.alignment == 0
    else { return nil }
    return offset
  }

  // The stored properties of `object` whose type is exactly `Target`, with their values.
  private func storedProperties(of object: Object) -> [(name: String, value: Target)] {
    var found: [(name: String, value: Target)] = []
    var mirror: Mirror? = Mirror(reflecting: object)
    while let current = mirror {
      for child in current.children {
        guard let name = child.label, type(of: child.value) == Target.self,
          let value = child.value as? Target
        else { continue }
        found.append((name, value))
      }
      mirror = current.superclassMirror
    }
    return found
  }

  // Names a one-component key path that prints only as `<computed …>`: the stored property of
  // `object` with the member's exact type, or, when several have it, the one with its current
  // value. Returns nil when that does not single one out; labels then show `<computed T>`.
  func storedPropertyName(in object: Object) -> String? {
    let path = MemberLabel.path(of: keyPath)
    // A settable one only: a read-only computed property is not stored, so it is never named
    // after a stored property that happens to hold the same value.
    guard isWritable, path.hasPrefix("<computed "), path.hasSuffix(">"),
      !path.contains(".")
    else {
      return nil
    }
    let candidates = storedProperties(of: object)
    if candidates.count == 1 { return candidates[0].name }
    guard let isEqual = equality(for: Target.self) else { return nil }
    let value = read(object)
    let matches = candidates.filter { isEqual($0.value, value) }
    return matches.count == 1 ? matches[0].name : nil
  }
}

// The offsets of plain stored properties found by `MemberAccess.storedFieldOffset(in:)`, by key
// path. Read and written only when binding.
//
// Only key paths that qualify are kept: they have a single stored component, so they hold no
// subscript arguments (which would stay alive here) and comparing them runs no user code. A key
// path's hash is computed before taking the lock, because hashing one with subscript arguments
// hashes the arguments.
//
// @unchecked Sendable: `offsets` is guarded by `lock`.
final class FieldOffsets: @unchecked Sendable {
  static let shared = FieldOffsets()

  private struct Key: Hashable {
    let keyPath: AnyKeyPath
    let hash: Int
    init(_ keyPath: AnyKeyPath) {
      self.keyPath = keyPath
      self.hash = keyPath.hashValue
    }
    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    static func == (lhs: Key, rhs: Key) -> Bool {
      lhs.hash == rhs.hash && lhs.keyPath == rhs.keyPath
    }
  }

  private let lock = Lock()
  private var offsets: [Key: Int] = [:]

  func offset(of keyPath: AnyKeyPath, find: () -> Int?) -> Int? {
    let key = Key(keyPath)
    if let known = lock.run({ offsets[key] }) { return known }
    // Found outside the lock: the description of a key path takes the runtime's locks. Two
    // threads may both find it.
    guard let found = find() else { return nil }
    lock.run { offsets[key] = found }
    return found
  }
}

// The one concrete member: a property of an object, with its conversions both ways.
//
// Its per-change methods run unspecialized (the member's types are known only at run time), so
// they keep values in caller-provided memory instead of generic temporaries such as
// `Optional<Target>`, each of which would cost a run-time metadata lookup.
final class KeyPathMember<Value, Object: AnyObject, Target>: MemberNode<Value>, BoundObserver,
  @unchecked Sendable
{
  let conversion: any MemberConversion<Value, Target>
  // `Target` as an Equatable type, when it is one: gives `==` on two `Target`s in memory
  // without a closure (no context to allocate per member, none to retain per change).
  let equatable: (any Equatable.Type)?
  // Where the property's current value can be read in its object, or -1 (read through the key
  // path). Set before publishing, by `usePlainStorage(of:)` for a plain stored property (see
  // `MemberAccess.storedFieldOffset(in:)`), or by `useBoundStorage` for a `@Bound` property,
  // whose wrapper keeps the value there (its getter does nothing else).
  @exclusivity(unchecked) private(set) var valueOffset = -1
  // Whether the property is also written at `valueOffset`: a plain stored property. A `@Bound`
  // property is written through its key path, whose setter runs the property's observers.
  @exclusivity(unchecked) private(set) var isWrittenInPlace = false
  let isWritable: Bool
  let canReceive: Bool
  let convertsBack: Bool
  // The conversion is the identity: `Target` is `Value`.
  let isIdentity: Bool

  init(
    object: Object, access: MemberAccess<Object, Target>, chain: ChainCore<Value>,
    role: MemberRole, conversion: any MemberConversion<Value, Target>
  ) {
    self.isWritable = access.isWritable
    self.conversion = conversion
    self.canReceive = access.isWritable && conversion.converts
    self.convertsBack = conversion.convertsBack
    self.equatable = Target.self as? any Equatable.Type
    self.isIdentity = conversion is IdentityConversion<Value>
    super.init(object: object, keyPath: access.keyPath, chain: chain, role: role)
  }

  // The key path is kept once, in `AnyMember`; this is its typed form.
  var access: MemberAccess<Object, Target> {
    MemberAccess(
      keyPath: unsafeDowncast(keyPath, to: KeyPath<Object, Target>.self), isWritable: isWritable)
  }

  // For a property that is not `@Bound`, before the member is published: finds whether it is a
  // plain stored property, written in place.
  func usePlainStorage(of object: Object) {
    guard let offset = access.storedFieldOffset(in: object) else { return }
    valueOffset = offset
    isWrittenInPlace = true
  }

  // Records the `@Bound` storage the probe found, before the member is published.
  func useBoundStorage(_ storageKeyPath: AnyKeyPath, of object: Object) {
    self.storageKeyPath = storageKeyPath
    // The wrapper's storage key path comes from the compiler: always one stored property.
    // Cached like plain properties: projecting it allocates an access record.
    guard let storage = storageKeyPath as? ReferenceWritableKeyPath<Object, Bound<Target>>,
      let storageOffset = FieldOffsets.shared.offset(
        of: storage, find: { MemberAccess<Object, Target>.projectedOffset(of: storage, in: object) }
      ),
      let valueOffset = MemoryLayout<Bound<Target>>.offset(of: \Bound<Target>.value)
    else { return }
    self.valueOffset = storageOffset + valueOffset
  }

  override var label: MemberLabel {
    MemberLabel(
      keyPath: keyPath, storageKeyPath: storageKeyPath,
      resolvedPath: object.flatMap {
        storageKeyPath == nil
          ? access.storedPropertyName(in: unsafeDowncast($0, to: Object.self)) : nil
      })
  }

  private var typedChain: ChainCore<Value> { unsafeDowncast(chain, to: ChainCore<Value>.self) }

  // Hands a change of this member to its chain. The member holds its chain for as long as the
  // member lives, so the chain is used without a retain of its own.
  private func deliver(_ value: Value) {
    Unmanaged.passUnretained(chain)._withUnsafeGuaranteedRef {
      unsafeDowncast($0, to: ChainCore<Value>.self).deliver(from: self, value)
    }
  }

  // The `Target` at `offset` in `object`.
  private func target(at offset: Int, in object: AnyObject) -> UnsafeMutablePointer<Target> {
    (UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + offset)
      .assumingMemoryBound(to: Target.self)
  }

  override func receive(_ value: Value) -> WriteOutcome {
    guard canReceive else { return .skipped }
    guard let object else { return .objectGone }
    if isIdentity {
      // `Target` is `Value`: written straight from the chain's value.
      return withUnsafePointer(to: value) {
        write(UnsafeRawPointer($0).assumingMemoryBound(to: Target.self), to: object)
      }
    }
    return withUnsafeTemporaryAllocation(of: Target.self, capacity: 1) { buffer in
      let converted = buffer.baseAddress.unsafelyUnwrapped
      guard conversion.convert(value, into: converted) else {
        return .failed(
          error(
            .conversionFailed(value: describe(value), from: "\(Value.self)", to: "\(Target.self)")
          ))
      }
      defer { converted.deinitialize(count: 1) }
      return write(converted, to: object)
    }
  }

  // Copies the `Target` at `source` into the property, unless the property already holds an
  // equal value.
  private func write(_ source: UnsafePointer<Target>, to object: AnyObject) -> WriteOutcome {
    if let equatable {
      let isUnchanged: Bool
      if valueOffset >= 0 {
        isUnchanged = equatable.bindIsEqual(target(at: valueOffset, in: object), source)
      } else {
        let current = access.read(unsafeDowncast(object, to: Object.self))
        isUnchanged = withUnsafePointer(to: current) { equatable.bindIsEqual($0, source) }
      }
      if isUnchanged { return .unchanged }
    }
    // The conversion, `==` and a getter are user code: they may have unbound this member.
    guard isAttached, chain.isActive else { return .skipped }
    if isWrittenInPlace {
      target(at: valueOffset, in: object).update(from: source, count: 1)
      return .written
    }
    isWriting = true
    access.write(source.pointee, to: unsafeDowncast(object, to: Object.self))
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
    guard role.sends, isAttached, convertsBack else { return }
    if isIdentity {
      // `Target` is `Value`.
      deliver(unsafeBitCast(newValue, to: Value.self))
      return
    }
    withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer in
      let value = buffer.baseAddress.unsafelyUnwrapped
      guard conversion.convertBack(newValue, into: value) else {
        typedChain.report(
          error(
            .backConversionFailed(
              value: describe(newValue), from: "\(Target.self)", to: "\(Value.self)")))
        return
      }
      deliver(value.pointee)
      value.deinitialize(count: 1)
    }
  }

  override func controlEventDidFire() {
    guard !isWriting, role.sends, isAttached, let anyObject = object else { return }
    if valueOffset >= 0 {
      send(target(at: valueOffset, in: anyObject).pointee)
    } else {
      send(access.read(unsafeDowncast(anyObject, to: Object.self)))
    }
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
      withUnsafePointer(to: rhs) { rhsPointer in equatable.bindIsEqual(lhsPointer, rhsPointer) }
    }
  }
}

extension Equatable {
  // Both pointers point at initialized values of `Self` (the caller's `Target`).
  fileprivate static func bindIsEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
    lhs.assumingMemoryBound(to: Self.self).pointee == rhs.assumingMemoryBound(to: Self.self).pointee
  }
}
