/// The common form that automatic conversion goes through.
///
/// When a member's type differs from its chain's type and both are ``BindConvertible``,
/// ChainBind converts the value to a `BindPrimitive` and builds the other type from it.
///
/// ```swift
/// 7.bindPrimitive                        // .int(7)
/// String(bindPrimitive: .int(7))         // "7"
/// Int(bindPrimitive: .string(" 42 "))    // 42
/// Int(bindPrimitive: .string("4.2"))     // nil: a conversion failure
/// ```
public enum BindPrimitive: Hashable, Sendable {
  /// No value: what `nil` converts to.
  case none
  /// A Boolean value.
  case bool(Bool)
  /// An integer.
  case int(Int)
  /// A double-precision number.
  case double(Double)
  /// A single-precision number.
  case float(Float)
  /// A string.
  case string(String)
}

/// A type that ChainBind converts automatically to and from the other convertible types.
///
/// `Int`, `Double`, `Float`, `Bool`, `String` and `Optional` of any convertible type conform.
/// Conform your own types to bind them to members of those types without a `convert:` closure.
///
/// ```swift
/// enum Level: Int, BindConvertible {
///   case low, high
///   var bindPrimitive: BindPrimitive { .int(rawValue) }
///   init?(bindPrimitive: BindPrimitive) {
///     guard let raw = Int(bindPrimitive: bindPrimitive) else { return nil }
///     self.init(rawValue: raw)
///   }
/// }
/// Bind.inout(model, \.level).out(label, \.text)   // label.text == "1" for .high
/// ```
///
/// Conversion never invents a value: an initializer that cannot represent its input returns
/// `nil`, and ChainBind reports a ``BindingError`` instead of writing anything.
public protocol BindConvertible {
  /// This value in the common form.
  var bindPrimitive: BindPrimitive { get }

  /// Creates a value from the common form, or returns `nil` when it cannot be represented.
  ///
  /// - Parameter bindPrimitive: The value to convert.
  init?(bindPrimitive: BindPrimitive)
}

extension Int: BindConvertible {
  /// This integer as ``BindPrimitive/int(_:)``.
  @inlinable
  public var bindPrimitive: BindPrimitive { .int(self) }

  /// Creates an integer: numbers convert (doubles truncate toward zero and fail when NaN,
  /// infinite or out of range), `true`/`false` are `1`/`0`, and a string must be a whole
  /// integer after trimming whitespace.
  ///
  /// ```swift
  /// Int(bindPrimitive: .double(-2.9))     // -2
  /// Int(bindPrimitive: .string(" 42 "))   // 42
  /// Int(bindPrimitive: .string("42abc"))  // nil
  /// ```
  ///
  /// - Parameter bindPrimitive: The value to convert.
  @inlinable
  public init?(bindPrimitive: BindPrimitive) {
    switch bindPrimitive {
    case .none: return nil
    case .bool(let value): self = value ? 1 : 0
    case .int(let value): self = value
    case .double(let value):
      guard let truncated = Int(exactly: value.rounded(.towardZero)) else { return nil }
      self = truncated
    case .float(let value):
      guard let truncated = Int(exactly: value.rounded(.towardZero)) else { return nil }
      self = truncated
    case .string(let text):
      guard let parsed = Int(text.trimmingBindWhitespace()) else { return nil }
      self = parsed
    }
  }
}

extension Double: BindConvertible {
  /// This number as ``BindPrimitive/double(_:)``.
  @inlinable
  public var bindPrimitive: BindPrimitive { .double(self) }

  /// Creates a double from a number, from `true`/`false` as `1`/`0`, or from a string that is a
  /// number after trimming whitespace (as `Double(_:)` or `Float(_:)` parses it: `0.5`, `1e3`).
  ///
  /// ```swift
  /// Double(bindPrimitive: .string("0.5"))   // 0.5
  /// Double(bindPrimitive: .int(3))          // 3.0
  /// ```
  ///
  /// - Parameter bindPrimitive: The value to convert.
  @inlinable
  public init?(bindPrimitive: BindPrimitive) {
    switch bindPrimitive {
    case .none: return nil
    case .bool(let value): self = value ? 1 : 0
    case .int(let value): self = Double(value)
    case .double(let value): self = value
    case .float(let value): self = Double(value)
    case .string(let text):
      guard let number = text.bindNumberText, let parsed = Double(number) else { return nil }
      self = parsed
    }
  }
}

extension Float: BindConvertible {
  /// This number as ``BindPrimitive/float(_:)``.
  @inlinable
  public var bindPrimitive: BindPrimitive { .float(self) }

  /// Creates a float from a number, from `true`/`false` as `1`/`0`, or from a string that is a
  /// number after trimming whitespace (as `Double(_:)` or `Float(_:)` parses it: `0.5`, `1e3`).
  ///
  /// ```swift
  /// Float(bindPrimitive: .string("0.25"))   // 0.25
  /// ```
  ///
  /// - Parameter bindPrimitive: The value to convert.
  @inlinable
  public init?(bindPrimitive: BindPrimitive) {
    switch bindPrimitive {
    case .none: return nil
    case .bool(let value): self = value ? 1 : 0
    case .int(let value): self = Float(value)
    case .double(let value): self = Float(value)
    case .float(let value): self = value
    case .string(let text):
      guard let number = text.bindNumberText, let parsed = Float(number) else { return nil }
      self = parsed
    }
  }
}

extension Bool: BindConvertible {
  /// This Boolean as ``BindPrimitive/bool(_:)``.
  @inlinable
  public var bindPrimitive: BindPrimitive { .bool(self) }

  /// Creates a Boolean: a number is `false` when zero and `true` otherwise; a string must be
  /// `true`, `false`, `yes`, `no`, `1` or `0` in any letter case, after trimming whitespace.
  ///
  /// ```swift
  /// Bool(bindPrimitive: .string("YES"))   // true
  /// Bool(bindPrimitive: .string("0"))     // false
  /// Bool(bindPrimitive: .string("maybe")) // nil
  /// ```
  ///
  /// - Parameter bindPrimitive: The value to convert.
  @inlinable
  public init?(bindPrimitive: BindPrimitive) {
    switch bindPrimitive {
    case .none: return nil
    case .bool(let value): self = value
    case .int(let value): self = value != 0
    case .double(let value): self = value != 0
    case .float(let value): self = value != 0
    case .string(let text):
      switch text.trimmingBindWhitespace().lowercased() {
      case "true", "yes", "1": self = true
      case "false", "no", "0": self = false
      default: return nil
      }
    }
  }
}

extension String: BindConvertible {
  /// This string as ``BindPrimitive/string(_:)``.
  @inlinable
  public var bindPrimitive: BindPrimitive { .string(self) }

  /// Creates a string with the value's `description`: `7`, `0.5`, `true`.
  ///
  /// ```swift
  /// String(bindPrimitive: .double(0.5))   // "0.5"
  /// String(bindPrimitive: .none)          // nil: `nil` never becomes a string
  /// ```
  ///
  /// - Parameter bindPrimitive: The value to convert.
  @inlinable
  public init?(bindPrimitive: BindPrimitive) {
    switch bindPrimitive {
    case .none: return nil
    case .bool(let value): self = value ? "true" : "false"
    case .int(let value): self = String(value)
    case .double(let value): self = String(value)
    case .float(let value): self = String(value)
    case .string(let value): self = value
    }
  }
}

extension Optional: BindConvertible where Wrapped: BindConvertible {
  /// The wrapped value's form, or ``BindPrimitive/none`` for `nil`.
  @inlinable
  public var bindPrimitive: BindPrimitive {
    switch self {
    case .none: return .none
    case .some(let wrapped): return wrapped.bindPrimitive
    }
  }

  /// Creates `nil` from ``BindPrimitive/none`` and wraps every other convertible value.
  ///
  /// A value the wrapped type cannot represent is a failure, not `nil`:
  ///
  /// ```swift
  /// Int?(bindPrimitive: .none)            // .some(nil)
  /// Int?(bindPrimitive: .string("7"))     // .some(7)
  /// Int?(bindPrimitive: .string("x"))     // nil: a conversion failure
  /// ```
  ///
  /// - Parameter bindPrimitive: The value to convert.
  @inlinable
  public init?(bindPrimitive: BindPrimitive) {
    if case .none = bindPrimitive {
      self = .none
      return
    }
    guard let wrapped = Wrapped(bindPrimitive: bindPrimitive) else { return nil }
    self = .some(wrapped)
  }
}

extension StringProtocol {
  /// The text a floating-point number is parsed from: trimmed, and nil when it has a NUL, at
  /// which Swift's parser stops (`"4\0x"` would be 4).
  @usableFromInline
  var bindNumberText: SubSequence? {
    let number = trimmingBindWhitespace()
    return number.utf8.contains(0) ? nil : number
  }

  /// The text without leading and trailing whitespace, as a slice (no copy).
  @usableFromInline
  func trimmingBindWhitespace() -> SubSequence {
    // Text that begins and ends with a visible ASCII character has nothing to trim: looking at
    // its bytes spares `Character.isWhitespace`'s Unicode property lookups.
    let visible: ClosedRange<UInt8> = 0x21...0x7E
    let endsAreVisible = utf8.withContiguousStorageIfAvailable { bytes in
      bytes.last.map { visible.contains(bytes[0]) && visible.contains($0) } ?? false
    }
    if endsAreVisible == true { return self[...] }
    var start = startIndex
    var end = endIndex
    while start < end, self[start].isWhitespace { start = index(after: start) }
    while end > start, self[index(before: end)].isWhitespace { end = index(before: end) }
    return self[start..<end]
  }
}
