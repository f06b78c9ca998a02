// How a member's value converts to and from its chain's type.
//
// Conversions are values of small generic types rather than closures: no closure context is
// allocated for the common cases, and each kind says whether it can convert each way.
//
// A conversion writes its result into memory the caller provides instead of returning an
// optional: member code runs unspecialized, and every `Optional<Target>` it builds would cost a
// run-time metadata lookup per change.
protocol MemberConversion<Value, Target> {
  associatedtype Value
  associatedtype Target
  // Whether chain values can be converted into the member (it can receive).
  var converts: Bool { get }
  // Whether member values can be converted into the chain (it can send).
  var convertsBack: Bool { get }
  // Initializes `result` with the converted value and returns true, or returns false and
  // leaves `result` uninitialized.
  func convert(_ value: Value, into result: UnsafeMutablePointer<Target>) -> Bool
  func convertBack(_ target: Target, into result: UnsafeMutablePointer<Value>) -> Bool
}

extension UnsafeMutablePointer {
  // Initializes the pointee from an optional; returns whether there was a value.
  fileprivate func initialize(ifPresent value: Pointee?) -> Bool {
    guard let value else { return false }
    initialize(to: value)
    return true
  }
}

struct IdentityConversion<Value>: MemberConversion {
  init() {}
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func convert(_ value: Value, into result: UnsafeMutablePointer<Value>) -> Bool {
    result.initialize(to: value)
    return true
  }
  func convertBack(_ target: Value, into result: UnsafeMutablePointer<Value>) -> Bool {
    result.initialize(to: target)
    return true
  }
}

struct AutomaticConversion<Value: BindConvertible, Target: BindConvertible>: MemberConversion {
  // How to build each side from a primitive, chosen once at bind time.
  private let targetKind = ConvertibleKind(Target.self)
  private let valueKind = ConvertibleKind(Value.self)
  init() {}
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func convert(_ value: Value, into result: UnsafeMutablePointer<Target>) -> Bool {
    targetKind.make(Target.self, from: value.bindPrimitive, into: UnsafeMutableRawPointer(result))
  }
  func convertBack(_ target: Target, into result: UnsafeMutablePointer<Value>) -> Bool {
    valueKind.make(Value.self, from: target.bindPrimitive, into: UnsafeMutableRawPointer(result))
  }
}

// The convertible types ChainBind knows, to build one from a `BindPrimitive` without asking the
// protocol: `T(bindPrimitive:)` returns a `T?`, and conversion code runs unspecialized, so a call
// through the protocol looks up the metadata of `Optional<T>` at run time on every change. The
// concrete initializers do not. Other types (your own conformances) go through the protocol.
enum ConvertibleKind: UInt8 {
  case int, double, float, bool, string, optionalString, optionalInt, optionalDouble, other

  init<T: BindConvertible>(_ type: T.Type) {
    switch type {
    case is Int.Type: self = .int
    case is Double.Type: self = .double
    case is Float.Type: self = .float
    case is Bool.Type: self = .bool
    case is String.Type: self = .string
    case is String?.Type: self = .optionalString
    case is Int?.Type: self = .optionalInt
    case is Double?.Type: self = .optionalDouble
    default: self = .other
    }
  }

  // Initializes `pointer` with a `T` built from `primitive`, which is of this kind; returns
  // whether it could.
  func make<T: BindConvertible>(
    _ type: T.Type, from primitive: BindPrimitive, into pointer: UnsafeMutableRawPointer
  ) -> Bool {
    switch self {
    case .int: Self.store(Int(bindPrimitive: primitive), at: pointer)
    case .double: Self.store(Double(bindPrimitive: primitive), at: pointer)
    case .float: Self.store(Float(bindPrimitive: primitive), at: pointer)
    case .bool: Self.store(Bool(bindPrimitive: primitive), at: pointer)
    case .string: Self.store(String(bindPrimitive: primitive), at: pointer)
    case .optionalString: Self.store(String?(bindPrimitive: primitive), at: pointer)
    case .optionalInt: Self.store(Int?(bindPrimitive: primitive), at: pointer)
    case .optionalDouble: Self.store(Double?(bindPrimitive: primitive), at: pointer)
    case .other: Self.makeThroughProtocol(type, from: primitive, into: pointer)
    }
  }

  // Out of line: its `T?` would otherwise make every call look up that type first.
  @inline(never)
  private static func makeThroughProtocol<T: BindConvertible>(
    _ type: T.Type, from primitive: BindPrimitive, into pointer: UnsafeMutableRawPointer
  ) -> Bool {
    store(T(bindPrimitive: primitive), at: pointer)
  }

  private static func store<T>(_ value: T?, at pointer: UnsafeMutableRawPointer) -> Bool {
    pointer.assumingMemoryBound(to: T.self).initialize(ifPresent: value)
  }
}

struct NegatingConversion<Target: BindConvertible>: MemberConversion {
  let negated: Bool
  private let targetKind = ConvertibleKind(Target.self)
  init(negated: Bool) { self.negated = negated }
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func convert(_ value: Bool, into result: UnsafeMutablePointer<Target>) -> Bool {
    targetKind.make(
      Target.self, from: (negated ? !value : value).bindPrimitive,
      into: UnsafeMutableRawPointer(result))
  }
  func convertBack(_ target: Target, into result: UnsafeMutablePointer<Bool>) -> Bool {
    guard let value = Bool(bindPrimitive: target.bindPrimitive) else { return false }
    result.initialize(to: negated ? !value : value)
    return true
  }
}

struct ClosureConversion<Value, Target>: MemberConversion {
  let forward: ((Value) -> Target)?
  let back: ((Target) -> Value?)?
  init(convert: ((Value) -> Target)?, back: ((Target) -> Value?)?) {
    self.forward = convert
    self.back = back
  }
  var converts: Bool { forward != nil }
  var convertsBack: Bool { back != nil }
  func convert(_ value: Value, into result: UnsafeMutablePointer<Target>) -> Bool {
    guard let forward else { return false }
    result.initialize(to: forward(value))
    return true
  }
  func convertBack(_ target: Target, into result: UnsafeMutablePointer<Value>) -> Bool {
    guard let back else { return false }
    return result.initialize(ifPresent: back(target))
  }
}
