// How a member's value converts to and from its chain's type.
//
// Conversions are values of small generic types rather than closures: no closure context is
// allocated for the common cases, and each kind says whether it can convert each way.
protocol MemberConversion<Value, Target> {
  associatedtype Value
  associatedtype Target
  // Whether chain values can be converted into the member (it can receive).
  var converts: Bool { get }
  // Whether member values can be converted into the chain (it can send).
  var convertsBack: Bool { get }
  func toMember(_ value: Value) -> Target?
  func toChain(_ target: Target) -> Value?
}
struct IdentityConversion<Value>: MemberConversion {
  init() {}
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func toMember(_ value: Value) -> Value? { value }
  func toChain(_ target: Value) -> Value? { target }
}
struct AutomaticConversion<Value: BindConvertible, Target: BindConvertible>: MemberConversion {
  init() {}
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func toMember(_ value: Value) -> Target? {
    Target(bindPrimitive: value.bindPrimitive)
  }
  func toChain(_ target: Target) -> Value? {
    Value(bindPrimitive: target.bindPrimitive)
  }
}
struct NegatingConversion<Target: BindConvertible>: MemberConversion {
  let negated: Bool
  init(negated: Bool) { self.negated = negated }
  var converts: Bool { true }
  var convertsBack: Bool { true }
  func toMember(_ value: Bool) -> Target? {
    Target(bindPrimitive: (negated ? !value : value).bindPrimitive)
  }
  func toChain(_ target: Target) -> Bool? {
    Bool(bindPrimitive: target.bindPrimitive).map { negated ? !$0 : $0 }
  }
}
struct ClosureConversion<Value, Target>: MemberConversion {
  let convert: ((Value) -> Target)?
  let back: ((Target) -> Value?)?
  init(convert: ((Value) -> Target)?, back: ((Target) -> Value?)?) {
    self.convert = convert
    self.back = back
  }
  var converts: Bool { convert != nil }
  var convertsBack: Bool { back != nil }
  func toMember(_ value: Value) -> Target? { convert.map { $0(value) } }
  func toChain(_ target: Target) -> Value? { back?(target) ?? nil }
}
