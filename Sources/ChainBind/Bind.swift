/// The entry points of ChainBind: start chains, unbind, and inspect the registry.
///
/// A chain starts from a head property with ``inout(_:_:isolation:)`` or
/// ``in(_:_:isolation:)-(_,()->ReferenceWritableKeyPath<Object,Value>,_)``; its value type is
/// the head's type and its current value the head's value. Members, filters and sinks are then
/// added with the methods of ``Chain``.
///
/// ```swift
/// Bind.inout(lottery, \.winCode)
///   .out(winCodeLabel, \.text)
///   .inout(winCodeField, \.text, on: .editingChanged)
///   .filter { $0.count <= 3 }
/// // winCodeLabel.text == "666", winCodeField.text == "666"
/// ```
public enum Bind {
  /// Starts a chain from a property that sends and receives, or joins the chain it is in.
  ///
  /// The property should be `@Bound`; otherwise ChainBind reports
  /// ``BindingError/Cause/notObservable`` and the property only receives. When the property
  /// already belongs to a chain of the same value type, the call returns that chain (same
  /// ``Chain/code``); when that chain has another type, the property moves to a new chain.
  ///
  /// ```swift
  /// let chain = Bind.inout(lottery, \.sn).out(snLabel, \.text)   // snLabel.text == "1"
  /// lottery.sn = 2                                                // snLabel.text == "2"
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property. Its type is the chain's value type.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: The chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public static func `inout`<Object: AnyObject, Value>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    Chain(
      core: ChainCore.makeHead(
        object, keyPath(), role: .inout, source: .property,
        isolation: isolation, thunks: .writable(keyPath)))
  }

  /// Starts a chain from a property that only sends, or joins the chain it is in.
  ///
  /// The chain takes the property's value as its current value but never writes the property,
  /// except to revert a change a filter rejected.
  ///
  /// ```swift
  /// Bind.in(sensor, \.reading).out(label, \.text)
  /// ```
  ///
  /// Swift picks this form when the key path is writable where you call it. For a read-only one
  /// (a computed property, or a `private(set)` one outside its type) it picks the form that never
  /// writes the property, not even to revert.
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, which should be `@Bound`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: The chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public static func `in`<Object: AnyObject, Value>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    Chain(
      core: ChainCore.makeHead(
        object, keyPath(), role: .in, source: .property,
        isolation: isolation, thunks: .writable(keyPath)))
  }

  /// Starts a chain from a read-only property, or joins the chain it is in.
  ///
  /// A computed property, or a `private(set)` one outside its type: the chain takes its value as
  /// the chain's current value and never writes it. A change a filter rejects is not reverted:
  /// the property keeps it, and the chain its last accepted value.
  ///
  /// ```swift
  /// Bind.in(form, \.canLogIn).out(button, \.isEnabled)
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, which should read `@Bound` or `@Observable` properties.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: The chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public static func `in`<Object: AnyObject, Value>(
    _ object: Object, _ keyPath: @autoclosure () -> KeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    Chain(
      core: ChainCore.makeHead(
        object, keyPath(), role: .in, source: .property,
        isolation: isolation, thunks: .readable(keyPath)))
  }

  /// Starts a chain from a control's property that sends when the control sends `event`, and
  /// receives the chain's changes.
  ///
  /// ```swift
  /// Bind.inout(slider, \.value, on: .valueChanged).out(label, \.text)
  /// slider.value = 0.5; slider.controlEvents.send(.valueChanged)   // label.text == "0.5"
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: The chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public static func `inout`<Control: ControlEventSource, Value>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Value>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    Chain(
      core: ChainCore.makeHead(
        control, keyPath(), role: .inout, source: .subscribing(control, event),
        isolation: isolation,
        thunks: .writable(
          keyPath, isControl: true)))
  }

  /// Starts a chain from a control's property that only sends, when the control sends `event`.
  ///
  /// The chain writes the property only to revert a change a filter rejected.
  ///
  /// ```swift
  /// Bind.in(searchField, \.text, on: .editingChanged).out(key: "search") { query in search(query) }
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, writable where you call this.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: The chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public static func `in`<Control: ControlEventSource, Value>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Value>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    Chain(
      core: ChainCore.makeHead(
        control, keyPath(), role: .in, source: .subscribing(control, event),
        isolation: isolation, thunks: .writable(keyPath, isControl: true)))
  }

  /// Starts a chain from a control's read-only property that sends when the control sends
  /// `event`.
  ///
  /// The chain never writes the property, not even to revert a change a filter rejected.
  ///
  /// ```swift
  /// Bind.in(picker, \.selectedTitle, on: .valueChanged).out(label, \.text)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, read-only where you call this.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: The chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public static func `in`<Control: ControlEventSource, Value>(
    _ control: Control, _ keyPath: @autoclosure () -> KeyPath<Control, Value>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value> {
    Chain(
      core: ChainCore.makeHead(
        control, keyPath(), role: .in, source: .subscribing(control, event),
        isolation: isolation, thunks: .readable(keyPath, isControl: true)))
  }

  /// Removes every membership of an object, in whatever chains.
  ///
  /// A chain left without a sending member is released.
  ///
  /// ```swift
  /// Bind.unbind(cell)   // before reusing a cell
  /// ```
  ///
  /// - Parameter object: The object whose properties to unbind.
  /// - Complexity: O(*m*), where *m* is the number of members of the chains it touches.
  public static func unbind(_ object: AnyObject) {
    Registry.current.unbind(object)
  }

  /// Removes one property's membership.
  ///
  /// ```swift
  /// Bind.unbind(label, \.text)
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property.
  ///   - keyPath: The property, spelled as when it was bound.
  /// - Complexity: O(*m*), where *m* is the number of members of its chain.
  public static func unbind<Object: AnyObject, Value>(
    _ object: Object, _ keyPath: KeyPath<Object, Value>
  ) {
    Registry.current.unbind(object, keyPath: keyPath)
  }

  /// Releases a whole chain: its members, filters and sinks.
  ///
  /// ```swift
  /// Bind.unbind(chain.code)   // chain.isActive == false
  /// ```
  ///
  /// - Parameter code: The chain's code.
  /// - Complexity: O(*m*), where *m* is the number of the chain's members.
  public static func unbind(_ code: ChainCode) {
    if let chain = code.chain { chain.registry.release(chain, as: .unbound) }
  }

  /// The number of chains alive in the process.
  ///
  /// ```swift
  /// let before = Bind.activeChainCount
  /// let chain = Bind.inout(model, \.value)       // before + 1
  /// chain.unbind()                               // before
  /// ```
  public static var activeChainCount: Int { Registry.current.activeChainCount }

  /// Handles the errors of chains that have no ``Chain/onError(isolation:_:)`` handler.
  ///
  /// By default it writes ``BindingError/description`` as one line to standard error. Replace it
  /// to send errors to your logger; set it once, early.
  ///
  /// ```swift
  /// Bind.fallbackErrorHandler = { error in logger.warning("\(error)") }
  /// ```
  public static var fallbackErrorHandler: @Sendable (BindingError) -> Void {
    get { FallbackHandler.shared.handler }
    set { FallbackHandler.shared.handler = newValue }
  }
}

// The process-wide fallback handler, inside a lock ThreadSanitizer sees. The lock holds a box,
// not the closure: a closure in `Locked`'s generic state is rewrapped by every `withLock`
// (Docs/Architecture.md, "Locks").
private final class FallbackHandler: Sendable {
  static let shared = FallbackHandler()

  private final class Box: Sendable {
    let handler: @Sendable (BindingError) -> Void
    init(_ handler: @escaping @Sendable (BindingError) -> Void) { self.handler = handler }
  }

  private let stored = Locked(Box(defaultReporter))

  var handler: @Sendable (BindingError) -> Void {
    get { stored.withLock { $0 }.handler }
    set {
      let box = Box(newValue)
      let replaced = stored.withLock { current in
        defer { current = box }
        return current
      }
      // Released after unlocking: its captures' deinits may read or set this handler.
      withExtendedLifetime(replaced) {}
    }
  }
}

@Sendable private func defaultReporter(_ error: BindingError) {
  writeToStandardError(error.description)
}
