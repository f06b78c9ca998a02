/// A chain of members that share one value: a change from any sending member reaches every
/// receiving member and every sink.
///
/// Start a chain with ``Bind``, then add members, filters and sinks. Each method returns the
/// chain, so a binding reads as one line. `Chain` is a handle: copies name the same chain.
///
/// ```swift
/// Bind.inout(lottery, \.winCode)                         // head: sends and receives
///   .out(winCodeLabel, \.text)                           // receives
///   .inout(winCodeField, \.text, on: .editingChanged)    // a control: sends on its event
///   .filter { $0.count <= 3 }                            // rejects (and reverts) longer codes
/// ```
///
/// The rules every chain follows:
/// - A member added to a chain gets the chain's current value at once (`in` members excepted).
/// - Members are written, then sinks called, in the order they were added.
/// - Filters run first; when one rejects, nothing is written and the member that made the
///   change gets the last accepted value back.
/// - A member already holding an equal value is not written; the member that made the change is
///   never written back; a change made while the chain is delivering is queued, never recursive.
/// - The chain holds its members' objects weakly and its sinks strongly.
///
/// The member-adding methods take their key path as an autoclosure and are inlined where you
/// call them: the key-path literal then compiles into a direct access to the property. The key
/// path is evaluated more than once, so a key path whose subscript arguments are computed by a
/// call (`\.items[index()]`) makes that call more than once.
///
/// A chain is `Sendable`: any thread or actor may add to it, unbind it or ask about it. Adding
/// to it from an actor's code isolates it to that actor: see <doc:Threading>.
public struct Chain<Value>: Sendable {
  @usableFromInline let core: ChainCore<Value>

  @usableFromInline
  init(core: ChainCore<Value>) {
    self.core = core
  }

  /// The chain's identity, shared by every handle to it.
  public var code: ChainCode { core.code }

  /// Whether the chain is alive: `false` once unbound, once its last sending member is gone, or
  /// once no member at all is left.
  ///
  /// ```swift
  /// let chain = Bind.inout(model, \.value)
  /// chain.unbind()
  /// chain.isActive   // false
  /// ```
  public var isActive: Bool { core.isActive }

  /// The number of members whose objects are alive; sinks are not counted.
  ///
  /// Members whose objects were deallocated are pruned first.
  ///
  /// ```swift
  /// Bind.inout(model, \.value).out(label, \.text).out(key: "log") { print($0) }.memberCount  // 2
  /// ```
  public var memberCount: Int {
    core.pruneDeadMembers()
    return core.snapshotMembers().count { !$0.isSink }
  }

  /// Releases the chain: every membership, filter and sink.
  ///
  /// Same as `Bind.unbind(code)`.
  ///
  /// ```swift
  /// chain.unbind()   // chain.isActive == false
  /// ```
  ///
  /// - Complexity: O(*m*), where *m* is the number of the chain's members.
  public func unbind() {
    core.registry.release(core, as: .unbound)
  }

  // MARK: Members of the chain's type

  /// Adds a member that sends and receives.
  ///
  /// The member gets the chain's current value now. It sends when it is `@Bound`; otherwise
  /// ChainBind reports ``BindingError/Cause/notObservable`` and it only receives. A property
  /// already in another chain moves here.
  ///
  /// ```swift
  /// Bind.inout(model, \.name).inout(otherModel, \.name)   // otherModel.name == model.name
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .inout, source: .property,
      isolation: isolation, thunks: .writable(keyPath))
    return self
  }

  /// Adds a member that only sends.
  ///
  /// It is written only to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.total).in(cart, \.total)
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
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation, thunks: .writable(keyPath))
    return self
  }

  /// Adds a read-only property as a member that sends.
  ///
  /// A computed property, or a `private(set)` one outside its type: it is never written. A
  /// change of its own that a filter rejects is not reverted: the property keeps it, and the
  /// chain its last accepted value.
  ///
  /// ```swift
  /// Bind.inout(model, \.canSave).in(form, \.isValid)
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, which should read `@Bound` or `@Observable` properties.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> KeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation, thunks: .readable(keyPath))
    return self
  }

  /// Adds a member that only receives.
  ///
  /// ```swift
  /// Bind.inout(model, \.title).out(titleLabel, \.text)   // titleLabel.text == model.title
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func out<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .out, source: .property,
      isolation: isolation, thunks: .writable(keyPath))
    return self
  }

  /// Adds a control's property that sends when the control sends `event`, and receives.
  ///
  /// ```swift
  /// Bind.inout(model, \.name).inout(nameField, \.text, on: .editingChanged)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Control: ControlEventSource>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Value>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .inout, source: .subscribing(control, event),
      isolation: isolation, thunks: .writable(keyPath, isControl: true)
    )
    return self
  }

  /// Adds a control's property that only sends, when the control sends `event`.
  ///
  /// It is written only to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.query).in(searchField, \.text, on: .editingChanged)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, writable where you call this.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Control: ControlEventSource>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Value>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .in, source: .subscribing(control, event),
      isolation: isolation, thunks: .writable(keyPath, isControl: true)
    )
    return self
  }

  /// Adds a control's read-only property that sends when the control sends `event`.
  ///
  /// It is never written, not even to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.choice).in(picker, \.selectedTitle, on: .valueChanged)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, read-only where you call this.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Control: ControlEventSource>(
    _ control: Control, _ keyPath: @autoclosure () -> KeyPath<Control, Value>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .in, source: .subscribing(control, event),
      isolation: isolation, thunks: .readable(keyPath, isControl: true)
    )
    return self
  }

  // MARK: Members with a conversion of their own

  /// Adds a member that receives the chain's value converted by `convert`.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.sn)
  ///   .out(screen, \.background, convert: { palette[$0 % palette.count] })
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property.
  ///   - convert: Turns the chain's value into the property's type.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func out<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    convert: @escaping (Value) -> Target,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .out, source: .property,
      isolation: isolation, thunks: .writable(keyPath, convert: Convert.total(convert), back: nil))
    return self
  }

  /// Adds a member that sends and receives through a conversion each way.
  ///
  /// `back` returns `nil` to reject a value: the change is dropped, a ``BindingError`` is
  /// reported, and the member keeps what it holds.
  ///
  /// ```swift
  /// Bind.inout(model, \.percent)   // Int
  ///   .inout(text, \.value, convert: { "\($0)%" }, back: { Int($0.dropLast()) })
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property.
  ///   - convert: Turns the chain's value into the property's type.
  ///   - back: Turns the property's value into the chain's type, or returns `nil` to reject it.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    convert: @escaping (Value) -> Target, back: @escaping (Target) -> Value?,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .inout, source: .property,
      isolation: isolation, thunks: .writable(keyPath, convert: Convert.total(convert), back: back))
    return self
  }

  /// Adds a member that only sends, through a conversion into the chain's type.
  ///
  /// Having no conversion from the chain's type, the member is never written, not even to revert
  /// a change of its own that a filter rejected.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(form, \.countText, back: { Int($0) })
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, which should be `@Bound`.
  ///   - back: Turns the property's value into the chain's type, or returns `nil` to reject it.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: @autoclosure () -> KeyPath<Object, Target>,
    back: @escaping (Target) -> Value?,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation, thunks: .readable(keyPath, back: back))
    return self
  }

  /// Adds a control's property that sends on `event` and receives, through a conversion each way.
  ///
  /// ```swift
  /// Bind.inout(model, \.rate)   // Double
  ///   .inout(slider, \.position, on: .valueChanged,
  ///          convert: { Int($0 * 100) }, back: { Double($0) / 100 })
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property.
  ///   - event: The event after which the chain reads the property.
  ///   - convert: Turns the chain's value into the property's type.
  ///   - back: Turns the property's value into the chain's type, or returns `nil` to reject it.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Control: ControlEventSource, Target>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Target>,
    on event: Control.Event, convert: @escaping (Value) -> Target,
    back: @escaping (Target) -> Value?,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .inout, source: .subscribing(control, event),
      isolation: isolation,
      thunks: .writable(keyPath, convert: Convert.total(convert), back: back, isControl: true))
    return self
  }

  /// Adds a control's property that only sends, on `event`, through a conversion.
  ///
  /// Having no conversion from the chain's type, the property is never written, not even to
  /// revert a change of its own that a filter rejected.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(field, \.text, on: .editingDidEnd, back: { Int($0) })
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property.
  ///   - event: The event after which the chain reads the property.
  ///   - back: Turns the property's value into the chain's type, or returns `nil` to reject it.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Control: ControlEventSource, Target>(
    _ control: Control, _ keyPath: @autoclosure () -> KeyPath<Control, Target>,
    on event: Control.Event,
    back: @escaping (Target) -> Value?,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .in, source: .subscribing(control, event),
      isolation: isolation, thunks: .readable(keyPath, back: back, isControl: true))
    return self
  }

  // MARK: Sinks, filters, errors

  /// Adds a closure that receives the current value now and every accepted change after the
  /// members are written.
  ///
  /// Adding a sink under a key the chain already has replaces that sink (the new one runs last).
  /// The chain retains the closure until ``removeOut(key:)`` or until the chain is released.
  /// With `initial: false` the sink is not called when it is added, only on the changes after:
  /// for an action (submit, navigate) rather than a rendering.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.isWin).out(key: "flash") { isWin in isWin ? lamp.flash() : lamp.stop() }
  /// Bind.inout(form, \.submitCount).out(key: "submit", initial: false) { _ in submit() }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The sink's name in this chain.
  ///   - initial: Whether to call the sink with the chain's current value now. The default is
  ///     `true`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  ///   - sink: The closure to call with each value.
  /// - Returns: This chain.
  @discardableResult
  public func out(
    key: String, initial: Bool = true, isolation: isolated (any Actor)? = #isolation,
    _ sink: @escaping (Value) -> Void
  ) -> Chain {
    out(key: key, initial: initial, isolation: isolation, starting: nil, sink)
  }

  // The same; `start` is given the chain's value when the sink is added without a first call.
  @usableFromInline
  @discardableResult
  func out(
    key: String, initial: Bool, isolation: isolated (any Actor)?,
    starting start: ((Value) -> Void)?, _ sink: @escaping (Value) -> Void
  ) -> Chain {
    guard core.admits(isolation, adding: "out(key: \"\(key)\")") else { return self }
    guard core.addSink(Sink(key: key, body: sink, start: start), initial: initial) else {
      core.report(
        BindingError(chain: code, member: "out(key: \"\(key)\")", cause: .chainInactive))
      return self
    }
    return self
  }

  /// Adds a closure that renders the chain's values into `owner`, and follows `owner` the way a
  /// property does.
  ///
  /// The chain holds the closure and the owner weakly, and hands the owner to the closure: it
  /// needs no capture. `(owner, key)` is a membership like a property's: it belongs to one chain,
  /// and adding it to another chain moves it there (a reused cell bound to a new item stops
  /// rendering the old one). It ends when the owner is deallocated (the closure is released at
  /// the chain's next change) and with `Bind.unbind(owner)`. It is not counted in
  /// ``memberCount``. Sinks run after the members are written, owned and keyed sinks together
  /// in the order they were added.
  ///
  /// ```swift
  /// Bind.in(item, \.title)
  ///   .out(cell, key: "title") { cell, title in cell.render(title) }
  /// ```
  ///
  /// - Parameters:
  ///   - owner: The object the closure renders into. The chain never retains it.
  ///   - key: The sink's name for this owner.
  ///   - initial: Whether to call the sink with the chain's current value now. The default is
  ///     `true`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  ///   - sink: The closure to call with the owner and each value.
  /// - Returns: This chain.
  @discardableResult
  public func out<Owner: AnyObject>(
    _ owner: Owner, key: String, initial: Bool = true,
    isolation: isolated (any Actor)? = #isolation, _ sink: @escaping (Owner, Value) -> Void
  ) -> Chain {
    core.addOwnedSink(owner, key: key, initial: initial, isolation: isolation, sink: sink)
    return self
  }

  /// Removes the sink added under `key`; it is not called again.
  ///
  /// ```swift
  /// chain.removeOut(key: "flash")
  /// ```
  ///
  /// - Parameter key: The sink's name.
  /// - Returns: This chain.
  @discardableResult
  public func removeOut(key: String) -> Chain {
    if core.removeSink(key: key) != nil && core.isTraced {
      core.trace(.memberRemoved(member: key, why: .unbound))
    }
    return self
  }

  /// Adds a check that every change must pass.
  ///
  /// All filters must pass; they run in the order added.
  ///
  /// When a filter rejects a change, no member is written and no sink runs; the member that made
  /// the change gets the chain's last accepted value back (when its key path is writable),
  /// without that write being a change.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.winCode)
  ///   .inout(field, \.text, on: .editingChanged)
  ///   .filter { $0.count <= 3 }
  /// field.text = "1234"; field.controlEvents.send(.editingChanged)
  /// // lottery.winCode is unchanged and field.text is back to it
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  ///   - isIncluded: Returns whether a change is accepted.
  /// - Returns: This chain.
  @discardableResult
  public func filter(
    isolation: isolated (any Actor)? = #isolation, _ isIncluded: @escaping (Value) -> Bool
  ) -> Chain {
    guard core.admits(isolation, adding: "filter") else { return self }
    if !core.addFilter(isIncluded) {
      core.report(BindingError(chain: code, member: "filter", cause: .chainInactive))
    }
    return self
  }

  /// Sets the closure that receives this chain's errors, instead of
  /// ``Bind/fallbackErrorHandler``.
  ///
  /// Errors of members added later in the same line go to it too, so put it early.
  ///
  /// ```swift
  /// Bind.inout(model, \.count)
  ///   .onError { error in log.warning("\(error)") }
  ///   .inout(field, \.text, on: .editingChanged)
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  ///   - handler: The closure to call with each error.
  /// - Returns: This chain.
  @discardableResult
  public func onError(
    isolation: isolated (any Actor)? = #isolation, _ handler: @escaping (BindingError) -> Void
  ) -> Chain {
    guard core.admits(isolation, adding: "onError") else { return self }
    core.setErrorHandler(handler)
    return self
  }
}
