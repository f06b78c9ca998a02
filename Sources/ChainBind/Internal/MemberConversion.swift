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
  init() {}
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func convert(_ value: Value, into result: UnsafeMutablePointer<Target>) -> Bool {
    result.initialize(ifPresent: Target(bindPrimitive: value.bindPrimitive))
  }
  func convertBack(_ target: Target, into result: UnsafeMutablePointer<Value>) -> Bool {
    result.initialize(ifPresent: Value(bindPrimitive: target.bindPrimitive))
  }
}

struct NegatingConversion<Target: BindConvertible>: MemberConversion {
  let negated: Bool
  init(negated: Bool) { self.negated = negated }
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func convert(_ value: Bool, into result: UnsafeMutablePointer<Target>) -> Bool {
    result.initialize(ifPresent: Target(bindPrimitive: (negated ? !value : value).bindPrimitive))
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
