/// Something a traced chain did: one step of a delivery, or a change of its membership.
///
/// A chain hands its events to the tracer set with ``Chain/trace(isolation:_:)``, one at a time, in the
/// order things happen in its delivery. Values appear as `String(describing:)`, computed only
/// while a tracer is set.
///
/// ```swift
/// Bind.inout(lottery, \.winCode).out(label, \.text).trace { event in print(event) }
/// lottery.winCode = "7"
/// // Lottery.winCode#3: change from Lottery.winCode: "7"
/// // Lottery.winCode#3: wrote Label.text = "7"
/// ```
public struct ChainEvent: Sendable, CustomStringConvertible {
  /// Why a member left its chain.
  public enum Removal: Sendable, Equatable, CustomStringConvertible {
    /// Unbound: `Bind.unbind(object)`, `Bind.unbind(object, keyPath)`, or a sink removed.
    case unbound
    /// Its object was deallocated.
    case deallocated

    /// `unbound` or `deallocated`.
    public var description: String {
      switch self {
      case .unbound: "unbound"
      case .deallocated: "deallocated"
      }
    }
  }

  /// What happened.
  ///
  /// Members are named as ``BindingError`` names them (`Label.text`), values as
  /// `String(describing:)` gives them.
  public enum Kind: Sendable, Equatable {
    /// A member sent a change into the chain.
    case changeReceived(from: String, value: String)
    /// The filter at `filter` (in the order filters were added, from 0) rejected a change.
    case filterRejected(filter: Int, value: String)
    /// After a rejection, the member that made the change got the chain's value back;
    /// `value` is what its setter got, converted to its type.
    case reverted(member: String, value: String)
    /// A receiving member was written; `value` is what its setter got, converted to its type
    /// (`true` for a switch in a chain of `Double`s).
    case memberWritten(member: String, value: String)
    /// A receiving member was not written: it already held an equal value.
    case memberSkipped(member: String)
    /// A value did not convert: the chain's value to a member's type (the member was not
    /// written), or a sending member's value to the chain's type (the change was not received).
    case conversionFailed(member: String, value: String)
    /// A sink was called, also for its first call when added; `key` is its key (an owned sink
    /// is named by its owner's type).
    case sinkCalled(key: String)
    /// A change arrived while the chain was delivering another one: it waits for its turn.
    case changeQueued(from: String, value: String)
    /// A member joined the chain (`in`, `out` or `inout`).
    case memberAdded(member: String, role: String)
    /// A member moved to another chain.
    case memberMovedAway(member: String)
    /// A member left the chain, or a sink: a keyed sink removed with
    /// ``Chain/removeOut(key:)`` is named by its key, an owned sink by its owner's type.
    case memberRemoved(member: String, why: Removal)
    /// The chain ended: unbound, or its last sending member is gone.
    case chainEnded
  }

  /// The chain the event belongs to.
  public let code: ChainCode
  /// What happened.
  public let kind: Kind
  // The line quotes the value: the chain's values are `String`s.
  private let quotesValue: Bool

  /// Makes an event; ChainBind makes them for tracers, a test may make its own.
  ///
  /// - Parameters:
  ///   - code: The chain's code.
  ///   - kind: What happened.
  public init(code: ChainCode, kind: Kind) {
    self.init(code: code, kind: kind, quotesValue: false)
  }

  init(code: ChainCode, kind: Kind, quotesValue: Bool) {
    self.code = code
    self.kind = kind
    self.quotesValue = quotesValue
  }

  /// The event as one line, as ``Chain/trace(isolation:)`` prints it; the values of a chain of
  /// `String`s are quoted.
  ///
  /// ```swift
  /// event.description   // Lottery.winCode#3: filter 0 rejected "1234"
  /// ```
  public var description: String {
    onOneLine("\(code): \(kind.text(quoting: quotesValue))")
  }
}

extension ChainEvent.Kind {
  fileprivate func text(quoting: Bool) -> String {
    let text = { (value: String) in quoting ? "\"\(value)\"" : value }
    return switch self {
    case .changeReceived(let from, let value): "change from \(from): \(text(value))"
    case .filterRejected(let filter, let value): "filter \(filter) rejected \(text(value))"
    case .reverted(let member, let value): "reverted \(member) to \(text(value))"
    case .memberWritten(let member, let value): "wrote \(member) = \(text(value))"
    case .memberSkipped(let member): "skipped \(member): already equal"
    case .conversionFailed(let member, let value): "\(text(value)) did not convert for \(member)"
    case .sinkCalled(let key): "called sink \(key)"
    case .changeQueued(let from, let value): "queued change from \(from): \(text(value))"
    case .memberAdded(let member, let role): "added \(role) \(member)"
    case .memberMovedAway(let member): "\(member) moved to another chain"
    case .memberRemoved(let member, let why): "removed \(member): \(why)"
    case .chainEnded: "chain ended"
    }
  }
}
