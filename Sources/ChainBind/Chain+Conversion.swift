// Members whose type differs from the chain's, converted automatically (Docs/Semantics.md,
// "Automatic conversion"), and Boolean members bound negated (Docs/Semantics.md, "Negation").
//
// The converting overloads are @_disfavoredOverload: when the member's type is the chain's
// type, the plain overloads in Chain.swift win and nothing is converted.

extension Chain where Value: BindConvertible {
  /// Adds a member of another convertible type that receives the chain's value, converted.
  ///
  /// A value that does not convert is not written: ChainBind reports
  /// ``BindingError/Cause/conversionFailed(value:from:to:)`` and writes the other members.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.sn).out(snLabel, \.text)   // Int -> String: snLabel.text == "1"
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, of any ``BindConvertible`` type.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func out<Object: AnyObject, Target: BindConvertible>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .out, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: { Convert.automatic($0) }, back: { Convert.automatic($0) },
        conversion: .automatic))
    return self
  }

  /// Adds a member of another convertible type that sends and receives, converted both ways.
  ///
  /// A value that does not convert into the chain's type is dropped with a
  /// ``BindingError/Cause/backConversionFailed(value:from:to:)``; the member keeps it.
  ///
  /// ```swift
  /// Bind.inout(settings, \.volume)   // Int
  ///   .inout(volumeField, \.text, on: .editingChanged)   // "7" <-> 7
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, of any ``BindConvertible`` type.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Object: AnyObject, Target: BindConvertible>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .inout, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: { Convert.automatic($0) }, back: { Convert.automatic($0) },
        conversion: .automatic))
    return self
  }

  /// Adds a member of another convertible type that only sends, converted into the chain's type.
  ///
  /// It is written, converted, only to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(form, \.countText)   // "12" -> 12
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, which should be `@Bound`, writable where you call this.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject, Target: BindConvertible>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: { Convert.automatic($0) }, back: { Convert.automatic($0) },
        conversion: .automatic))
    return self
  }

  /// Adds a read-only property of another convertible type that sends, converted into the
  /// chain's type.
  ///
  /// It is never written, not even to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(form, \.itemCountText)   // a computed "12" -> 12
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, read-only where you call this.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject, Target: BindConvertible>(
    _ object: Object, _ keyPath: @autoclosure () -> KeyPath<Object, Target>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation,
      thunks: .readable(keyPath, back: { Convert.automatic($0) }, conversion: .automatic))
    return self
  }

  /// Adds a control's property of another convertible type that sends on `event` and receives.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.winRate)   // Double
  ///   .inout(rateField, \.text, on: .editingChanged)   // "0.5" <-> 0.5
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, of any ``BindConvertible`` type.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Control: ControlEventSource, Target: BindConvertible>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Target>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .inout, source: .subscribing(control, event),
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: { Convert.automatic($0) }, back: { Convert.automatic($0) },
        isControl: true, conversion: .automatic))
    return self
  }

  /// Adds a control's property of another convertible type that only sends, on `event`.
  ///
  /// It is written, converted, only to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(field, \.text, on: .editingDidEnd)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, of any ``BindConvertible`` type, writable where you
  ///     call this.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Control: ControlEventSource, Target: BindConvertible>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Target>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .in, source: .subscribing(control, event),
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: { Convert.automatic($0) }, back: { Convert.automatic($0) },
        isControl: true, conversion: .automatic))
    return self
  }

  /// Adds a control's read-only property of another convertible type that sends, on `event`.
  ///
  /// It is never written, not even to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(model, \.count).in(stepper, \.valueText, on: .valueChanged)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's property, of any ``BindConvertible`` type, read-only where you
  ///     call this.
  ///   - event: The event after which the chain reads the property.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Control: ControlEventSource, Target: BindConvertible>(
    _ control: Control, _ keyPath: @autoclosure () -> KeyPath<Control, Target>,
    on event: Control.Event,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .in, source: .subscribing(control, event),
      isolation: isolation,
      thunks: .readable(
        keyPath, back: { Convert.automatic($0) }, isControl: true, conversion: .automatic))
    return self
  }
}

extension Chain where Value == Bool {
  /// Adds a Boolean member that receives the chain's value, negated when `negated` is `true`.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.isWin).out(lamp, \.isDark, negated: true)
  /// lottery.isWin = true   // lamp.isDark == false
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The Boolean property.
  ///   - negated: Whether to write `!value`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func out<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Bool>,
    negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .out, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: Convert.negating(negated), back: Convert.negatingBack(negated),
        conversion: negated ? .negated : .notNegated))
    return self
  }

  /// Adds a Boolean member that sends and receives, negated both ways when `negated` is `true`.
  ///
  /// ```swift
  /// Bind.inout(settings, \.isMuted).inout(preferences, \.isSoundOn, negated: true)
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The Boolean property.
  ///   - negated: Whether to apply `!` on the way in and on the way out.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Bool>,
    negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .inout, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: Convert.negating(negated), back: Convert.negatingBack(negated),
        conversion: negated ? .negated : .notNegated))
    return self
  }

  /// Adds a Boolean member that only sends, negated when `negated` is `true`.
  ///
  /// It is written, negated, only to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(player, \.isPlaying).in(pauseState, \.isPaused, negated: true)
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The Boolean property, which should be `@Bound`, writable where you call this.
  ///   - negated: Whether to send `!value`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Bool>,
    negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: Convert.negating(negated), back: Convert.negatingBack(negated),
        conversion: negated ? .negated : .notNegated))
    return self
  }

  /// Adds a read-only Boolean property that sends, negated when `negated` is `true`.
  ///
  /// It is never written, not even to revert a rejected change of its own.
  ///
  /// ```swift
  /// Bind.inout(form, \.isLocked).in(session, \.isSignedIn, negated: true)   // a computed Bool
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The Boolean property, read-only where you call this.
  ///   - negated: Whether to send `!value`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `in`<Object: AnyObject>(
    _ object: Object, _ keyPath: @autoclosure () -> KeyPath<Object, Bool>, negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .in, source: .property,
      isolation: isolation,
      thunks: .readable(
        keyPath, back: Convert.negatingBack(negated),
        conversion: negated ? .negated : .notNegated))
    return self
  }

  /// Adds a control's Boolean property that sends on `event` and receives, negated both ways
  /// when `negated` is `true`.
  ///
  /// ```swift
  /// Bind.inout(settings, \.isMuted).inout(soundSwitch, \.isOn, on: .valueChanged, negated: true)
  /// ```
  ///
  /// - Parameters:
  ///   - control: The control. The chain never retains it.
  ///   - keyPath: The control's Boolean property.
  ///   - event: The event after which the chain reads the property.
  ///   - negated: Whether to apply `!` on the way in and on the way out.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Control: ControlEventSource>(
    _ control: Control, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Control, Bool>,
    on event: Control.Event, negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      control, keyPath(), role: .inout, source: .subscribing(control, event),
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: Convert.negating(negated), back: Convert.negatingBack(negated),
        isControl: true, conversion: negated ? .negated : .notNegated))
    return self
  }

  /// Adds a member of another convertible type that receives the chain's value, negated when
  /// `negated` is `true`, then converted.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.isWin).out(loseLabel, \.text, negated: true)   // "true" when not won
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, of any ``BindConvertible`` type.
  ///   - negated: Whether to convert `!value`.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func out<Object: AnyObject, Target: BindConvertible>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .out, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: Convert.negating(negated), back: Convert.negatingBack(negated),
        conversion: negated ? .negated : .notNegated))
    return self
  }

  /// Adds a member of another convertible type that sends and receives, negated both ways when
  /// `negated` is `true`, and converted.
  ///
  /// ```swift
  /// Bind.inout(settings, \.isHidden).inout(form, \.visibleText, negated: true)  // "true" <-> false
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object that owns the property. The chain never retains it.
  ///   - keyPath: The property, of any ``BindConvertible`` type.
  ///   - negated: Whether to apply `!` on the way in and on the way out.
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Adding from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @_disfavoredOverload
  @inlinable
  @inline(__always)
  @discardableResult
  public func `inout`<Object: AnyObject, Target: BindConvertible>(
    _ object: Object, _ keyPath: @autoclosure () -> ReferenceWritableKeyPath<Object, Target>,
    negated: Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain {
    core.add(
      object, keyPath(), role: .inout, source: .property,
      isolation: isolation,
      thunks: .writable(
        keyPath, convert: Convert.negating(negated), back: Convert.negatingBack(negated),
        conversion: negated ? .negated : .notNegated))
    return self
  }
}
