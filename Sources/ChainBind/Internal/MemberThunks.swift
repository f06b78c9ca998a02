// The typed work of a member (convert, compare, write; read, convert back, send), as closures
// built by the `@inlinable` member-adding functions, so in the caller's module: there the
// member's types are concrete and a key-path literal captured alone by a closure folds into a
// direct access to the property (Docs/Architecture.md, "The hot path").

// Writes the chain value at `value` (a `Value` of the member's chain) into the member's object.
@usableFromInline
typealias WriteThunk = (_ object: AnyObject, _ value: UnsafeRawPointer, _ member: Member) -> Void

// Converts a value of the member's property and delivers it into the chain: the value at
// `value` (a `@Bound` property's token passes the value just set), or, without one, the
// property read from `object` (a control's event).
@usableFromInline
typealias SendThunk = (_ object: AnyObject?, _ value: UnsafeRawPointer?, _ member: Member) -> Void

@usableFromInline
struct MemberThunks<Value, Object: AnyObject, Target> {
  @usableFromInline let write: WriteThunk?
  // nil when the member cannot send (an `out` member, or no `back:` conversion).
  @usableFromInline let send: SendThunk?
  // Reads the property once when binding (the probe, the head's value).
  @usableFromInline let read: (Object) -> Target
  // `==` of two `Target`s behind pointers (false when `Target` is not `Equatable`), made here,
  // where it is specialized: a tracked member compares every value it reads (Tracking.swift).
  @usableFromInline let isEqual: (UnsafeRawPointer, UnsafeRawPointer) -> Bool

  // Whether the key path is one object however often it is formed: a literal without subscript
  // arguments, which the runtime makes once and keeps, or a key path passed in a variable. The
  // registry may then remember facts about it by its identity, without hashing it, while a
  // shared access holds it (`KeyPathFacts`).
  @usableFromInline let isSharedKeyPath: Bool
  // How the closures were built, when nothing of the caller's went into them: with a shared key
  // path, every member added at this call site can share them (`MemberAccess`).
  @usableFromInline let recipe: MemberThunksRecipe?

  @inlinable
  @inline(__always)
  init(
    read: @escaping (Object) -> Target, write: WriteThunk?, send: SendThunk?,
    isSharedKeyPath: Bool, recipe: MemberThunksRecipe?
  ) {
    self.read = read
    self.isEqual = Self.equality
    self.write = write
    self.send = send
    self.isSharedKeyPath = isSharedKeyPath
    self.recipe = recipe
  }

  // A member that receives through `convert` and sends through `back`. `keyPath` is evaluated
  // once per closure, so each closure captures a key path of its own and nothing else uses it.
  @inlinable
  @inline(__always)
  // `conversion`: which of ChainBind's conversions `convert` and `back` are; nil when they are
  // the caller's.
  static func writable(
    _ keyPath: () -> ReferenceWritableKeyPath<Object, Target>,
    convert: ((Value) -> Target?)?, back: ((Target) -> Value?)?, isControl: Bool = false,
    conversion: MemberThunksRecipe.Conversion? = nil
  ) -> Self {
    Self(
      read: getter(keyPath()),
      write: convert.map { writer(keyPath(), $0, isControl: isControl) },
      send: back.map { isControl ? reader(keyPath(), $0) : sender($0) },
      isSharedKeyPath: keyPath() === keyPath(),
      recipe: conversion.map { .init($0, isWritable: true, isControl: isControl) })
  }

  // A member bound through a key path read-only where it was added: it sends and is never
  // written, not even to revert a change a filter rejected. Not told at run time: a key path
  // to a `private(set)` property casts to a writable one.
  @inlinable
  @inline(__always)
  static func readable(
    _ keyPath: () -> KeyPath<Object, Target>, back: @escaping (Target) -> Value?,
    isControl: Bool = false, conversion: MemberThunksRecipe.Conversion? = nil
  ) -> Self {
    Self(
      read: getter(keyPath()), write: nil,
      send: isControl ? reader(keyPath(), back) : sender(back),
      isSharedKeyPath: keyPath() === keyPath(),
      recipe: conversion.map { .init($0, isWritable: false, isControl: isControl) })
  }

  @inlinable
  @inline(__always)
  static func getter(_ keyPath: KeyPath<Object, Target>) -> (Object) -> Target {
    { object in object[keyPath: keyPath] }
  }

  // A control's writer marks its member overwritten (`store`); each closure captures only its
  // key path and conversion.
  @inlinable
  @inline(__always)
  static func writer(
    _ keyPath: ReferenceWritableKeyPath<Object, Target>, _ convert: @escaping (Value) -> Target?,
    isControl: Bool
  ) -> WriteThunk {
    if isControl {
      return { object, value, member in
        convertAndStore(value, convert, at: keyPath, in: object, member, isControl: true)
      }
    }
    return { object, value, member in
      convertAndStore(value, convert, at: keyPath, in: object, member, isControl: false)
    }
  }

  @inlinable
  @inline(__always)
  static func convertAndStore(
    _ value: UnsafeRawPointer, _ convert: (Value) -> Target?,
    at keyPath: ReferenceWritableKeyPath<Object, Target>, in object: AnyObject, _ member: Member,
    isControl: Bool
  ) {
    let value = value.assumingMemoryBound(to: Value.self).pointee
    guard var converted = convert(value) else {
      member.conversionFailed(value, from: Value.self, to: Target.self, back: false)
      return
    }
    store(
      &converted, at: keyPath, in: unsafeDowncast(object, to: Object.self), member,
      isControl: isControl)
  }

  // Writes `value` unless the property already holds an equal one.
  @inlinable
  @inline(__always)
  static func store(
    _ value: inout Target, at keyPath: ReferenceWritableKeyPath<Object, Target>,
    in object: Object, _ member: Member, isControl: Bool
  ) {
    // Before the getter and `==`, user code: a change of the member's own made meanwhile (by
    // another thread) is newer than `value`, and is delivered after it (`Member.canWrite`).
    let pending = member.pendingChangeCount
    var current = object[keyPath: keyPath]
    if bindIsEqual(&current, &value) {
      if _slowPath(member.chain.isTraced) { member.chain.noteWrite(TracedWrite.skipped) }
      return
    }
    guard member.canWrite(since: pending) else { return }
    if _slowPath(member.chain.isTraced) { member.chain.traceWriting(member, value) }
    member.isWriting = true
    object[keyPath: keyPath] = value
    member.isWriting = false
    // A control sends what it reads when its event fires: a change of it made before this
    // write and still to be delivered no longer is what it holds (`Member.isOverwritten`; a
    // `@Bound` member is marked by its setter's echo).
    if isControl { member.markOverwritten() }
  }

  @inlinable
  static func equality(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
    guard let equatable = Target.self as? any Equatable.Type else { return false }
    return equatable.bindIsEqual(.init(mutating: lhs), .init(mutating: rhs))
  }

  // Sends the value a `@Bound` property's token passes.
  @inlinable
  @inline(__always)
  static func sender(_ back: @escaping (Target) -> Value?) -> SendThunk {
    { _, value, member in
      guard let value else { return }
      send(value.assumingMemoryBound(to: Target.self).pointee, back, member)
    }
  }

  // Reads a control's property and sends it.
  @inlinable
  @inline(__always)
  static func reader(
    _ keyPath: KeyPath<Object, Target>, _ back: @escaping (Target) -> Value?
  ) -> SendThunk {
    { object, _, member in
      guard let object else { return }
      send(unsafeDowncast(object, to: Object.self)[keyPath: keyPath], back, member)
    }
  }

  @inlinable
  @inline(__always)
  static func send(_ target: Target, _ back: (Target) -> Value?, _ member: Member) {
    guard member.isSending else { return }
    // The conversion is user code: when no thread delivers, it runs inside the delivery this
    // thread begins, so that what it changes waits for the value it converts (its result). A
    // tracked member's read is work of the delivery already.
    let chain = member.chain
    let isWork = !member.isSendingRead && chain.beginOwnWorkIfIdle()
    if let value = back(target) {
      deliver(value, from: member, isWorkResult: isWork)
    } else {
      member.conversionFailed(target, from: Target.self, to: Value.self, back: true)
    }
    if isWork { chain.endOwnWork() }
  }

  @inlinable
  @inline(__always)
  static func deliver(_ value: Value, from member: Member, isWorkResult: Bool = false) {
    // The member holds its chain: no retain of its own.
    Unretained(member.chain).with {
      unsafeDowncast($0, to: ChainCore<Value>.self).deliver(
        from: member, value, isWorkResult: isWorkResult)
    }
  }
}

// A member of the chain's own type: nothing to convert, so the closures capture only the key
// path, or nothing at all (no context to allocate).
extension MemberThunks where Target == Value {
  @inlinable
  @inline(__always)
  // Sends too when bound `out`: its role decides, and a join may unite it with a sending role
  // (Docs/Semantics.md, "Join and move").
  static func writable(
    _ keyPath: () -> ReferenceWritableKeyPath<Object, Value>, isControl: Bool = false
  ) -> Self {
    Self(
      read: getter(keyPath()), write: writer(keyPath(), isControl: isControl),
      send: isControl ? reader(keyPath()) : sender, isSharedKeyPath: keyPath() === keyPath(),
      recipe: MemberThunksRecipe(.same, isWritable: true, isControl: isControl))
  }

  @inlinable
  @inline(__always)
  static func readable(_ keyPath: () -> KeyPath<Object, Value>, isControl: Bool = false) -> Self {
    Self(
      read: getter(keyPath()), write: nil,
      send: isControl ? reader(keyPath()) : sender, isSharedKeyPath: keyPath() === keyPath(),
      recipe: MemberThunksRecipe(.same, isWritable: false, isControl: isControl))
  }

  @inlinable
  @inline(__always)
  static func writer(
    _ keyPath: ReferenceWritableKeyPath<Object, Value>, isControl: Bool
  ) -> WriteThunk {
    if isControl {
      return { object, value, member in
        storeValue(value, at: keyPath, in: object, member, isControl: true)
      }
    }
    return { object, value, member in
      storeValue(value, at: keyPath, in: object, member, isControl: false)
    }
  }

  @inlinable
  @inline(__always)
  static func storeValue(
    _ value: UnsafeRawPointer, at keyPath: ReferenceWritableKeyPath<Object, Value>,
    in object: AnyObject, _ member: Member, isControl: Bool
  ) {
    var value = value.assumingMemoryBound(to: Value.self).pointee
    store(
      &value, at: keyPath, in: unsafeDowncast(object, to: Object.self), member,
      isControl: isControl)
  }

  @inlinable
  static var sender: SendThunk {
    { _, value, member in
      guard let value, member.isSending else { return }
      deliver(value.assumingMemoryBound(to: Value.self).pointee, from: member)
    }
  }

  @inlinable
  @inline(__always)
  static func reader(_ keyPath: KeyPath<Object, Value>) -> SendThunk {
    { object, _, member in
      guard let object, member.isSending else { return }
      deliver(unsafeDowncast(object, to: Object.self)[keyPath: keyPath], from: member)
    }
  }
}

// The conversions, as closures for `MemberThunks` (Docs/Semantics.md, "Conversion").
@usableFromInline
enum Convert {
  @inlinable
  @inline(__always)
  static func automatic<Source: BindConvertible, Target: BindConvertible>(
    _ value: Source
  ) -> Target? {
    Target(bindPrimitive: value.bindPrimitive)
  }

  @inlinable
  @inline(__always)
  static func negating<Target: BindConvertible>(_ negated: Bool) -> (Bool) -> Target? {
    { Target(bindPrimitive: (negated ? !$0 : $0).bindPrimitive) }
  }

  @inlinable
  @inline(__always)
  static func negatingBack<Target: BindConvertible>(_ negated: Bool) -> (Target) -> Bool? {
    { Bool(bindPrimitive: $0.bindPrimitive).map { negated ? !$0 : $0 } }
  }

  @inlinable
  @inline(__always)
  static func total<Value, Target>(_ convert: @escaping (Value) -> Target) -> (Value) -> Target? {
    { convert($0) }
  }
}

// `lhs == rhs` when `T` is Equatable, else false. In specialized code the cast is decided at
// compile time and the comparison is `T`'s own `==`. In-out, so that no value is copied to
// take its address.
@inlinable
@inline(__always)
func bindIsEqual<T>(_ lhs: inout T, _ rhs: inout T) -> Bool {
  guard let equatable = T.self as? any Equatable.Type else { return false }
  return withUnsafeMutablePointer(to: &lhs) { lhs in
    withUnsafeMutablePointer(to: &rhs) { rhs in equatable.bindIsEqual(lhs, rhs) }
  }
}

extension Equatable {
  // Both pointers point at initialized values of `Self`.
  @inlinable
  static func bindIsEqual(_ lhs: UnsafeMutableRawPointer, _ rhs: UnsafeMutableRawPointer) -> Bool {
    lhs.assumingMemoryBound(to: Self.self).pointee == rhs.assumingMemoryBound(to: Self.self).pointee
  }
}
