import Synchronization

/// Makes a class property a source that chains observe: every set is a change.
///
/// Mark any stored property of a class `@Bound` to start chains from it or to bind it as an
/// `in` or `inout` member. Sets notify synchronously, on the thread that sets, and every set
/// counts, even of an equal value (as with KVO). An unbound property costs one optional
/// pointer beside its value and one `nil` check per set; a read of any `@Bound` property costs one
/// relaxed atomic load more than a read of a plain stored property.
///
/// ```swift
/// final class Lottery {
///   @Bound var sn = 1
///   @Bound var winCode = "666"
/// }
/// let lottery = Lottery()
/// Bind.inout(lottery, \.sn).out(label, \.text)   // label.text == "1"
/// lottery.sn = 2                                 // label.text == "2"
/// ```
///
/// The wrapper's storage also carries the token that removes the property's membership when its
/// object is deallocated, so a `@Bound` member never outlives its object.
/// `@Bound` works in classes only; in a struct it does not compile.
@propertyWrapper
public struct Bound<Value> {
  // The only cost of an unbound property: nil until the property is first bound. First, so that
  // its offset does not depend on `Value`.
  @usableFromInline var token: BoundToken?
  @usableFromInline var value: Value

  /// Creates a bound property with its initial value.
  ///
  /// - Parameter wrappedValue: The property's initial value.
  public init(wrappedValue: Value) {
    self.token = nil
    self.value = wrappedValue
  }

  /// Unavailable: `@Bound` is for properties of classes.
  @available(*, unavailable, message: "@Bound can only be applied to properties of classes")
  public var wrappedValue: Value {
    get { fatalError("@Bound can only be applied to properties of classes") }
    // swift-format-ignore: AllPublicDeclarationsHaveDocumentation
    set { fatalError("@Bound can only be applied to properties of classes") }
  }

  /// Reads and writes the property of an instance, notifying its chain on every set.
  ///
  /// The compiler calls this subscript for every access to a `@Bound` property; you never call
  /// it yourself.
  ///
  /// - Parameters:
  ///   - instance: The object that owns the property.
  ///   - wrappedKeyPath: The key path of the property.
  ///   - storageKeyPath: The key path of the wrapper's storage.
  @inlinable
  public static subscript<EnclosingSelf: AnyObject>(
    _enclosingInstance instance: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Bound<Value>>
  ) -> Value {
    // Always inlined: the key-path literals then fold into direct accesses to the storage, and
    // a read is a load plus one relaxed load of the probe gate.
    @inline(__always) get {
      // Only on a thread that is probing or collecting what a read touches, the probe gets the
      // storage's token by a read; the storage is written only to give it a token it lacks, so
      // a read stays a read for threads that read the property meanwhile.
      if _slowPath(boundProbeGate.count.load(ordering: .relaxed) != 0),
        let reader = BoundProbe.reader()
      {
        // Under its object's stripe: two threads reading a new object at once (two chains'
        // re-reads) must not both install a token.
        // The token goes unretained: only a thread holding the stripe replaces it.
        let stripe = TokenStripe.lock(for: instance)
        if let token = BoundProbe.visit(
          reader, instance, wrapped: wrappedKeyPath, storage: storageKeyPath,
          token: unsafeBitCast(instance[keyPath: storageKeyPath].token, to: UnsafeRawPointer?.self))
        {
          instance[keyPath: storageKeyPath].token = token
        }
        stripe.unlock()
      }
      return instance[keyPath: storageKeyPath].value
    }
    @inline(__always) set {
      instance[keyPath: storageKeyPath].value = newValue
      // The token, unretained: once a binding keeps it, it stays in the storage until the object
      // dies, and the object lives through its own setter (a binding that does not keep it takes
      // it out on its own thread, while it reads). A bit cast, so that no retain is emitted.
      let token = unsafeBitCast(instance[keyPath: storageKeyPath].token, to: UnsafeRawPointer?.self)
      if let token {
        BoundToken.didSet(Unretained(address: token), newValue)
      }
    }
  }
}

extension Bound: Encodable where Value: Encodable {
  /// Encodes the property's value, as if it were not wrapped.
  ///
  /// - Parameter encoder: The encoder to write to.
  /// - Throws: The encoder's error.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(value)
  }
}

extension Bound: Decodable where Value: Decodable {
  /// Decodes the property's value, as if it were not wrapped.
  ///
  /// The decoded property starts unbound.
  ///
  /// - Parameter decoder: The decoder to read from.
  /// - Throws: The decoder's error.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    self.init(wrappedValue: try container.decode(Value.self))
  }
}

extension KeyedEncodingContainer {
  /// Encodes an optional `@Bound` property like a plain optional: a `nil` value is left out.
  ///
  /// Synthesized `Encodable` conformances call this for `@Bound var name: T?` properties.
  ///
  /// ```swift
  /// final class Player: Codable { @Bound var nickname: String? = nil }
  /// // encodes as {} while nickname is nil
  /// ```
  ///
  /// - Parameters:
  ///   - value: The property's storage.
  ///   - key: The key to encode under.
  /// - Throws: The container's encoding error.
  public mutating func encode<Wrapped: Encodable>(
    _ value: Bound<Wrapped?>, forKey key: Key
  ) throws {
    try encodeIfPresent(value.value, forKey: key)
  }
}

extension KeyedDecodingContainer {
  /// Decodes an optional `@Bound` property like a plain optional: a missing key is `nil`.
  ///
  /// Synthesized `Decodable` conformances call this for `@Bound var name: T?` properties.
  ///
  /// ```swift
  /// final class Player: Codable { @Bound var nickname: String? = nil }
  /// // decoding {} gives nickname == nil
  /// ```
  ///
  /// - Parameters:
  ///   - type: The property's storage type.
  ///   - key: The key to decode.
  /// - Returns: The property's storage, unbound.
  /// - Throws: The container's decoding error for a value of the wrong type.
  public func decode<Wrapped: Decodable>(
    _ type: Bound<Wrapped?>.Type, forKey key: Key
  ) throws -> Bound<Wrapped?> {
    Bound(wrappedValue: try decodeIfPresent(Wrapped.self, forKey: key))
  }
}
