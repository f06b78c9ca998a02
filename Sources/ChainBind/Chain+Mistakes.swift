// Overloads that exist only to be refused: each matches a common mistake that no real overload
// accepts, so the compiler names the fix instead of a key path or closure type it could not
// convert. An unavailable declaration ranks below every available one, so valid code never
// picks them; the whole test suite type-checks with them in place. The messages, with the code
// that triggers each, are in the "Common mistakes" article (ChainBind.docc) and checked by
// .ci/check-mistakes.

extension Chain {
  /// Refused: a read-only property cannot receive the chain's value.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).out(other, \.id)   // `id` is a `let`: refused
  /// Bind.inout(model, \.count).in(other, \.id)    // it can send
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: A read-only property.
  ///   - isolation: The caller's actor.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "a read-only property (a 'let', or a computed property without 'set') cannot receive: make it a 'var', or add it with '.in(_:_:)' to only send"
  )
  @discardableResult
  public func out<Object: AnyObject>(
    _ object: Object, _ keyPath: KeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: a read-only property cannot receive the chain's value.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).inout(other, \.id)   // `id` is a `let`: refused
  /// Bind.inout(model, \.count).in(other, \.id)      // it can send
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: A read-only property.
  ///   - isolation: The caller's actor.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "a read-only property (a 'let', or a computed property without 'set') cannot receive: make it a 'var', or add it with '.in(_:_:)' to only send"
  )
  @discardableResult
  public func `inout`<Object: AnyObject>(
    _ object: Object, _ keyPath: KeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: the property's type is not the chain's, and no automatic conversion joins them.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).out(wallet, \.money)   // Money: refused
  /// Bind.inout(model, \.count).out(wallet, \.money, convert: { Money(cents: $0) })
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: A property of another type.
  ///   - isolation: The caller's actor.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "the property's type is not the chain's value type, and the two are not both BindConvertible: pass 'convert:', or make both types conform to BindConvertible"
  )
  @discardableResult
  public func out<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: the property's type is not the chain's, and no automatic conversion joins them.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).inout(wallet, \.money)   // Money: refused
  /// Bind.inout(model, \.count)
  ///   .inout(wallet, \.money, convert: { Money(cents: $0) }, back: { $0.cents })
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: A property of another type.
  ///   - isolation: The caller's actor.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "the property's type is not the chain's value type, and the two are not both BindConvertible: pass 'convert:' and 'back:', or make both types conform to BindConvertible"
  )
  @discardableResult
  public func `inout`<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: the property's type is not the chain's, and no automatic conversion joins them.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(wallet, \.money)   // Money: refused
  /// Bind.inout(model, \.count).in(wallet, \.money, back: { $0.cents })
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: A property of another type.
  ///   - isolation: The caller's actor.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "the property's type is not the chain's value type, and the two are not both BindConvertible: pass 'back:', or make both types conform to BindConvertible"
  )
  @discardableResult
  public func `in`<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: a filter's closure takes the chain's value.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).filter { (text: String) in !text.isEmpty }   // refused
  /// Bind.inout(model, \.count).filter { count in count >= 0 }
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor.
  ///   - isIncluded: A closure that takes another type.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "a filter's closure takes the chain's value type, not a member's: a filter sees the chain's value before any member converts it"
  )
  @discardableResult
  public func filter<Other>(
    isolation: isolated (any Actor)? = #isolation, _ isIncluded: @escaping (Other) -> Bool
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: list sinks need a chain whose value is an array of `Equatable` elements.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).outChanges(key: "rows") { _ in }   // an Int chain: refused
  /// Bind.inout(model, \.count).out(key: "count") { count in print(count) }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The sink's name.
  ///   - initial: Whether to call the sink now.
  ///   - isolation: The caller's actor.
  ///   - sink: The closure.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "outChanges needs a chain whose value is an Array of Equatable elements: use 'out(key:)' to receive each value of any other chain"
  )
  @discardableResult
  public func outChanges(
    key: String, initial: Bool = true, isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (ListChange<Value>) -> Void
  ) -> Chain {
    fatalError("unavailable")
  }

  /// Refused: list sinks need a chain whose value is an array of `Equatable` elements.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).outChanges(label, key: "rows") { _, _ in }   // refused
  /// Bind.inout(model, \.count).out(label, key: "count") { label, count in label.show(count) }
  /// ```
  ///
  /// - Parameters:
  ///   - owner: The object the closure renders into.
  ///   - key: The sink's name for this owner.
  ///   - initial: Whether to call the sink now.
  ///   - isolation: The caller's actor.
  ///   - sink: The closure.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "outChanges needs a chain whose value is an Array of Equatable elements: use 'out(_:key:)' to receive each value of any other chain"
  )
  @discardableResult
  public func outChanges<Owner: AnyObject>(
    _ owner: Owner, key: String, initial: Bool = true,
    isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (Owner, ListChange<Value>) -> Void
  ) -> Chain {
    fatalError("unavailable")
  }
}

extension Bind {
  /// Refused: a read-only property cannot start a chain as `inout`: it cannot receive.
  ///
  /// ```swift
  /// Bind.inout(model, \.id)   // `id` is a `let`: refused
  /// Bind.in(model, \.id)      // it can send
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: A read-only property.
  ///   - isolation: The caller's actor.
  /// - Returns: Nothing: the call does not compile.
  @available(
    *, unavailable,
    message:
      "a read-only property (a 'let', or a computed property without 'set') cannot receive: make it a 'var', or start the chain with 'Bind.in(_:_:)' to only send"
  )
  @discardableResult
  public static func `inout`<Object: AnyObject, Value>(
    _ object: Object, _ keyPath: KeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    fatalError("unavailable")
  }
}
