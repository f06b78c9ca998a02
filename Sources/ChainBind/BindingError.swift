/// An error in a chain: which chain, which member, and what failed.
///
/// ChainBind never crashes and never writes a made-up value. When something cannot be done,
/// it reports a `BindingError` to the chain's ``Chain/onError(isolation:_:)`` handler, or, without one,
/// to ``Bind/fallbackErrorHandler``, which writes one line to standard error by default.
///
/// ```swift
/// Bind.inout(model, \.count)
///   .onError { print($0) }
///   .inout(field, \.text, on: .editingChanged)
/// field.text = "12a"; field.controlEvents.send(.editingChanged)
/// // ChainBind: chain Model.count#3, member Field.text: cannot convert "12a" (String) to Int;
/// //   the change was dropped and the member keeps its value
/// ```
public struct BindingError: Error, Sendable, CustomStringConvertible {
  /// What went wrong.
  public enum Cause: Sendable, Hashable, CustomStringConvertible {
    /// The member was bound to send (`in` or `inout`) but nothing tells ChainBind when it
    /// changes: it is neither `@Bound` nor a control bound with `on:`, and its key path reads
    /// neither a `@Bound` property nor an `@Observable` one. It only receives; when its key path
    /// is read-only, it cannot receive either, and it was not bound (the error's description
    /// says which).
    ///
    /// ```swift
    /// final class Cart { var items = 0; var total: Int { items * 2 } }   // no @Bound
    /// Bind.inout(model, \.count).in(cart, \.items)   // .notObservable: it only receives
    /// Bind.inout(model, \.count).in(cart, \.total)   // .notObservable: it was not bound
    /// ```
    case notObservable
    /// Converting the chain's value into the member's type failed. The member was not written;
    /// the other members were.
    case conversionFailed(value: String, from: String, to: String)
    /// Converting the member's value into the chain's type failed (or `back:` returned `nil`).
    /// The change was dropped; the chain keeps its value and the member keeps what it holds.
    case backConversionFailed(value: String, from: String, to: String)
    /// The chain had already ended (it was unbound, or its last sending member is gone), so
    /// nothing was added to it. The error's description says how it ended.
    case chainInactive
    /// The chain's head could not be bound (the error reported before this one says why), so
    /// the chain was never active, and nothing was added to it.
    ///
    /// ```swift
    /// final class Cart { var items = 0; var total: Int { items * 2 } }   // no @Bound
    /// Bind.in(cart, \.total)           // .notObservable: read-only, the head was not bound
    ///   .out(label, \.text)            // .headNotBound: nothing was added
    /// ```
    case headNotBound
    /// The chain is isolated to the actor named `chain`, and this was added from the isolation
    /// of another actor, named `caller`. Nothing was added (Docs/Semantics.md, "Isolation").
    case isolationMismatch(chain: String, caller: String)
    /// The member kept changing from inside the chain's own delivery: its sinks, setters or
    /// conversions changed the chain again 10 000 times in one delivery (a sink that writes its
    /// source unconditionally). The changes that delivery had queued were dropped (another
    /// thread's change made meanwhile is still delivered); the chain stays bound and usable
    /// (Docs/Semantics.md, "Re-entrancy").
    case feedbackLoop

    /// A sentence that says what failed and what ChainBind did about it.
    public var description: String {
      switch self {
      case .notObservable:
        return "cannot send changes: it is neither @Bound nor a control bound with on:"
      case .conversionFailed(let value, let from, let to):
        return "cannot convert \(value) (\(from)) to \(to); the member was not written"
      case .backConversionFailed(let value, let from, let to):
        return "cannot convert \(value) (\(from)) to \(to);"
          + " the change was dropped and the member keeps its value"
      case .chainInactive:
        return "the chain is no longer active; nothing was added"
      case .headNotBound:
        return "the chain never became active: its head could not be bound (see the error"
          + " reported for it); nothing was added"
      case .isolationMismatch(let chain, let caller):
        return "the chain is isolated to \(chain) and this was added from \(caller);"
          + " nothing was added"
      case .feedbackLoop:
        return "it changed the chain again 10000 times from inside the chain's own delivery"
          + " (a sink or setter that sets it unconditionally?); the changes it queued were"
          + " dropped"
      }
    }
  }

  /// The chain the error happened in.
  public let chain: ChainCode
  /// The member: its type and key path (`Lottery.winCode`), or a keyed sink (`out(key: "flash")`).
  public let member: String
  /// What went wrong.
  public let cause: Cause
  // What ChainBind did about it, when the cause alone does not tell (`notObservable`); for
  // `chainInactive`, how the chain ended (`ChainEnd`).
  let outcome: String?

  /// Creates an error report.
  ///
  /// - Parameters:
  ///   - chain: The chain the error happened in.
  ///   - member: The member, as its type and key path.
  ///   - cause: What went wrong.
  public init(chain: ChainCode, member: String, cause: Cause) {
    self.init(chain: chain, member: member, cause: cause, outcome: nil)
  }

  init(chain: ChainCode, member: String, cause: Cause, outcome: String?) {
    self.chain = chain
    self.member = member
    self.cause = cause
    self.outcome = outcome
  }

  /// One line naming chain, member and cause, and what ChainBind did about it.
  public var description: String {
    let what =
      switch (cause, outcome) {
      case (.chainInactive, let ended?):
        "the chain is no longer active (\(ended)); nothing was added"
      case (_, let outcome?): "\(cause); \(outcome)"
      case (_, nil): cause.description
      }
    return onOneLine("ChainBind: chain \(chain), member \(member): \(what)")
  }
}
