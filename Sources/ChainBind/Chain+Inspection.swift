// Seeing what a chain does: its description, its sinks, its rejections and its trace
// (Docs/Semantics.md, "Tracing").

extension Chain: CustomStringConvertible {
  /// The chain on one line: its code, its value, its members in order with their roles and
  /// labels, its filters and its sinks.
  ///
  /// Members are named as ``BindingError`` names them; a control's property is followed by the
  /// events it sends on. Describing the value is the only code of yours this runs, and never
  /// under a lock.
  ///
  /// ```swift
  /// print(Bind.inout(lottery, \.winCode).out(label, \.text).filter { $0.count <= 3 })
  /// // Lottery.winCode#3 = "777": inout Lottery.winCode, out Label.text; 1 filter; no sinks
  /// ```
  public var description: String { core.describe() }

  /// The number of the chain's live sinks: keyed, owned and list sinks, and the iterators of
  /// ``values``, as ``memberCount`` counts members.
  ///
  /// Sinks whose owners were deallocated are pruned first.
  ///
  /// ```swift
  /// Bind.inout(model, \.value).out(key: "log") { print($0) }.sinkCount   // 1
  /// ```
  public var sinkCount: Int {
    core.pruneDeadMembers()
    return core.withLock { held in
      Int(held.sinkCount + held.ownedSinkCount)
    }
  }

  /// Sets the closure called with each value a filter rejects, after the member that made the
  /// change got the chain's value back.
  ///
  /// It runs where the chain delivers (on its actor, when it is isolated to one), once per
  /// rejected change: a text field shakes, a hint appears. One handler per chain: the last set
  /// wins.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.winCode)
  ///   .inout(field, \.text, on: .editingChanged)
  ///   .filter { $0.count <= 3 }
  ///   .onReject { code in hint.text = "\(code) is too long" }
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Setting it from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  ///   - handler: The closure to call with each rejected value.
  /// - Returns: This chain.
  @discardableResult
  public func onReject(
    isolation: isolated (any Actor)? = #isolation, _ handler: @escaping (Value) -> Void
  ) -> Chain {
    guard core.admits(isolation, adding: "onReject") else { return self }
    if !core.setRejectHandler(handler) {
      core.report(BindingError(chain: code, member: "onReject", cause: .chainInactive))
    }
    return self
  }

  /// Writes every event of the chain to standard error, one line each.
  ///
  /// Each line is a ``ChainEvent``'s description. Tracing changes no behaviour; it replaces the
  /// tracer set before, if any.
  ///
  /// ```swift
  /// Bind.inout(lottery, \.winCode).out(label, \.text).trace()
  /// lottery.winCode = "7"
  /// // Lottery.winCode#3: change from Lottery.winCode: "7"
  /// // Lottery.winCode#3: wrote Label.text = "7"
  /// ```
  ///
  /// - Parameter isolation: The caller's actor, passed by Swift; leave it out. Tracing from an
  ///   actor's code isolates the chain to that actor (changes are delivered on it).
  /// - Returns: This chain.
  @discardableResult
  public func trace(isolation: isolated (any Actor)? = #isolation) -> Chain {
    trace(isolation: isolation) { event in writeToStandardError(event.description) }
  }

  /// Hands every event of the chain to `tracer`, instead of writing it to standard error.
  ///
  /// The tracer is called where each event happens (the thread or actor delivering), in the
  /// order things happen, and never under a lock. One tracer per chain: the last set wins.
  ///
  /// ```swift
  /// var events: [ChainEvent] = []
  /// let chain = Bind.inout(lottery, \.winCode).out(label, \.text).trace { events.append($0) }
  /// lottery.winCode = "7"
  /// events.map(\.kind)
  /// // [.changeReceived(from: "Lottery.winCode", value: "7"),
  /// //  .memberWritten(member: "Label.text", value: "7")]
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor, passed by Swift; leave it out. Tracing from an
  ///     actor's code isolates the chain to that actor (changes are delivered on it).
  ///   - tracer: The closure to call with each event.
  /// - Returns: This chain.
  @discardableResult
  public func trace(
    isolation: isolated (any Actor)? = #isolation, _ tracer: @escaping (ChainEvent) -> Void
  ) -> Chain {
    guard core.admits(isolation, adding: "trace") else { return self }
    guard core.isActive else {
      core.report(BindingError(chain: code, member: "trace", cause: .chainInactive))
      return self
    }
    core.setTracer(tracer)
    return self
  }

  /// Stops tracing the chain.
  ///
  /// ```swift
  /// chain.trace()
  /// chain.removeTrace()   // no more events
  /// ```
  ///
  /// - Returns: This chain.
  @discardableResult
  public func removeTrace() -> Chain {
    core.setTracer(nil)
    return self
  }
}

extension ChainCore {
  // The chain on one line (`Chain.description`): copied under the lock, described after it.
  func describe() -> String {
    let (value, members, filters, sinks) = withLock { held in
      (current(held), held.members, held.filterCount, self.sinks(held) ?? [])
    }
    var parts: [String] = []
    var owned: [(order: Int32, name: String)] = []
    for member in members {
      guard member.isAttached else { continue }
      if member.isSink {
        owned.append((member.sinkOrder, member.tracedName))
        continue
      }
      var part = "\(member.role) \(member.label)"
      if let object = member.object {
        let events = eventNames(of: member, on: object)
        if !events.isEmpty { part += " on " + events.joined(separator: ", ") }
      }
      parts.append(part)
    }
    let keyed = sinks.filter { !$0.isRemoved }.map { (order: $0.order, name: $0.tracedKey) }
    let sinkNames = (keyed + owned).sorted { $0.order < $1.order }.map(\.name)
    let filterText = filters == 1 ? "1 filter" : "\(filters) filters"
    let sinkText = sinkNames.isEmpty ? "no sinks" : "sinks: " + sinkNames.joined(separator: ", ")
    let memberText = parts.isEmpty ? "no members" : parts.joined(separator: ", ")
    return onOneLine(
      "\(code) = \(describeQuoted(value)): \(memberText); \(filterText); \(sinkText)")
  }
}
