import Synchronization

// Tracing (Docs/Semantics.md, "Tracing"): a chain with a tracer delivers through the functions
// below, copies of the untraced ones that say what they do. A chain without one pays a relaxed
// load and a branch per change (`runTurn`), and never reaches this file.

// What the last write of a traced delivery did, told by the write closure (`MemberThunks.store`)
// and by `Member.conversionFailed`.
@usableFromInline
enum TracedWrite {
  @usableFromInline static var written: UInt8 { 0 }
  @usableFromInline static var skipped: UInt8 { 1 }
  @usableFromInline static var failed: UInt8 { 2 }
  // Told before the setter ran (`AnyChain.traceWriting`).
  @usableFromInline static var traced: UInt8 { 3 }
}

extension AnyChain {
  @inlinable final var isTraced: Bool { traced.load(ordering: .relaxed) }

  // Hands an event to the tracer, if one is set: the event is made only then, and the tracer is
  // called after unlocking.
  final func trace(_ kind: @autoclosure () -> ChainEvent.Kind) {
    let traced = withLock { held -> (tracer: (ChainEvent) -> Void, code: ChainCode)? in
      guard let extras = held.extras, let tracer = extras.tracer else { return nil }
      let code = extras.tracedCode ?? code
      extras.tracedCode = code
      return (tracer, code)
    }
    guard let traced else { return }
    traced.tracer(ChainEvent(code: traced.code, kind: kind(), quotesValue: valuesAreText))
  }

  // `member.tracedName`, remembered while the chain is traced.
  final func tracedName(of member: Member) -> String {
    let id = ObjectIdentifier(member)
    if let name = withLock({ $0.extras?.tracedNames[id]?.1 }) { return name }
    let name = member.tracedName
    // Released after unlocking: a member's closures may hold the caller's values.
    let forgotten = withLock { held -> [ObjectIdentifier: (Member, String)] in
      guard let extras = held.extras, extras.tracer != nil else { return [:] }
      var forgotten: [ObjectIdentifier: (Member, String)] = [:]
      // A chain whose members come and go forgets them now and then.
      if extras.tracedNames.count >= 64 { swap(&forgotten, &extras.tracedNames) }
      extras.tracedNames[id] = (member, name)
      return forgotten
    }
    withExtendedLifetime(forgotten) {}
    return name
  }

  // Sets or removes the tracer; the one it replaces is released after unlocking.
  final func setTracer(_ tracer: ((ChainEvent) -> Void)?) {
    let replaced = withLock { held -> (Any?, [ObjectIdentifier: (Member, String)]) in
      guard isActive || tracer == nil else { return (tracer, [:]) }
      let extras = extrasInUse(held)
      var names: [ObjectIdentifier: (Member, String)] = [:]
      if tracer == nil { swap(&names, &extras.tracedNames) }
      defer {
        extras.tracer = tracer
        traced.store(tracer != nil, ordering: .releasing)
      }
      return (extras.tracer, names)
    }
    withExtendedLifetime(replaced) {}
  }

  // Called by a traced delivery's write closure, never under the lock: the member already held
  // an equal value, or the value did not convert.
  @usableFromInline
  @inline(never)
  final func noteWrite(_ outcome: UInt8) {
    withLock { held in held.extras }?.writeOutcome.store(outcome, ordering: .relaxed)
  }

  // Called by a traced delivery's write closure just before the member's setter runs: the
  // write is told before what the setter does (a change it makes shows as queued after it),
  // with the value the setter gets, converted to the member's type.
  @usableFromInline
  @inline(never)
  final func traceWriting(_ member: Member, _ written: Any) {
    let pending = withLock { held -> (AnyChainExtras, Bool)? in
      guard let extras = held.extras, let write = extras.pendingWrite,
        write.member == ObjectIdentifier(member)
      else { return nil }
      extras.pendingWrite = nil
      return (extras, write.reverting)
    }
    guard let (extras, reverting) = pending else { return }
    extras.writeOutcome.store(TracedWrite.traced, ordering: .relaxed)
    let name = tracedName(of: member)
    let text = describeValue(written)
    trace(
      reverting ? .reverted(member: name, value: text) : .memberWritten(member: name, value: text))
  }

  // After unlocking: a change arrived while the chain delivered. Not one that work this thread
  // runs made (a tracked member's re-read): it is delivered right after, waiting for nothing.
  @usableFromInline
  @inline(never)
  final func traceQueued(from origin: Member, _ value: Any) {
    let thread = currentThreadID()
    let isWorksOwn = withLock { held in
      held.delivery.work != nil && held.delivery.isDelivering(on: thread)
    }
    if isWorksOwn { return }
    trace(.changeQueued(from: tracedName(of: origin), value: describeValue(value)))
  }
}

// How events show a value (Docs/Semantics.md, "Tracing"); their lines quote a `String`
// (`ChainEvent.description`).
func describeValue(_ value: Any) -> String { String(describing: value) }

// How a chain's description shows its value: a string quoted, anything else as it describes
// itself.
func describeQuoted(_ value: Any) -> String {
  if let text = value as? String { return "\"\(text)\"" }
  return String(describing: value)
}

// A line ChainBind shows (a chain's description, an event, an error) with the line breaks a
// user's value or key put in it shown as `\n`, `\r` or `\u{…}`.
func onOneLine(_ text: String) -> String {
  guard text.contains(where: \.isNewline) else { return text }
  var line = ""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\n": line += "\\n"
    case "\r": line += "\\r"
    case _ where Character(scalar).isNewline:
      line += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
    default: line.unicodeScalars.append(scalar)
    }
  }
  return line
}

extension Member {
  // Names the member in events and in its chain's description: an owned sink by its owner.
  var tracedName: String {
    guard isSink else { return label.description }
    return object.map { "out(\(type(of: $0)))" } ?? "out(deallocated)"
  }
}

// Made under the registry's lock when a traced chain loses a member, and released after
// unlocking (`Garbage`): its deinit tells the tracer, outside every lock.
final class TraceNote {
  private let chain: AnyChain
  private let kind: () -> ChainEvent.Kind
  // The chain's last event (it ended): the tracer and the names it remembered go with it, so
  // that neither keeps the chain, whose members they hold, alive.
  private let endsTrace: Bool

  init(_ chain: AnyChain, endsTrace: Bool = false, _ kind: @escaping () -> ChainEvent.Kind) {
    self.chain = chain
    self.endsTrace = endsTrace
    self.kind = kind
  }

  // A member left `member.chain`: moved to another chain, or unbound, or its object is gone
  // (known after unlocking: the object is not loaded under the lock).
  static func removed(_ member: Member, movingAway: Bool) -> TraceNote {
    TraceNote(member.chain) {
      let name = member.isSink ? member.chain.tracedName(of: member) : member.label.description
      if movingAway { return .memberMovedAway(member: name) }
      return .memberRemoved(member: name, why: member.object == nil ? .deallocated : .unbound)
    }
  }

  deinit {
    chain.trace(kind())
    if endsTrace { chain.setTracer(nil) }
  }
}

extension ChainCore {
  // A turn of a traced chain: `runTurn`, `runFilteredTurn` and `deliverAccepted` in one, with
  // events.
  @usableFromInline
  @inline(never)
  final func runTracedTurn(
    from origin: Member, _ value: Value, skippingFilters: Bool, dead: inout DeadMembers,
    _ held: consuming Held
  ) -> Bool {
    let previous = current(held)
    let filters = skippingFilters ? [] : (self.filters(held) ?? [])
    release(held)
    trace(.changeReceived(from: tracedName(of: origin), value: describeValue(value)))
    if let rejecting = filters.indices.first(where: { !filters[$0](value) }) {
      trace(.filterRejected(filter: rejecting, value: describeValue(value)))
      revert(origin, to: previous, dead: &dead)
      rejected(value)
      return false
    }
    let accepted = acquire()
    if !filters.isEmpty, isIsolated, let isolation = isolationElsewhere(accepted) {
      handOff(accepted: origin, value, to: isolation, accepted)
      return true
    }
    deliverTraced(value, from: origin, dead: &dead, accepted)
    return false
  }

  // A rejected change's sender gets the chain's last accepted value back, unless a newer change
  // of its own is queued (it is delivered next): `runFilteredTurn`'s revert, traced when the
  // chain can write the sender, for the traced turn and a batch's filters.
  final func revert(_ origin: Member, to previous: Value, dead: inout DeadMembers) {
    guard origin.takesDelivery && isActive else { return }
    guard isTraced && origin.write != nil else { return write(previous, to: origin, dead: &dead) }
    let extras = withLock { extrasInUse($0) }
    withUnsafePointer(to: previous) { pointer in
      tracedWrite(at: pointer, to: origin, reverting: true, extras: extras, dead: &dead)
    }
  }

  // `deliverAccepted`, with events.
  final func deliverTraced(
    _ value: Value, from origin: Member?, dead: inout DeadMembers, _ held: consuming Held
  ) {
    let previous = current(held)
    setCurrent(value, held)
    let members = held.members.unretained
    let sinks = held.sinkCount > 0 ? self.sinks(held) : nil
    let extras = extrasInUse(held)
    release(held)
    withExtendedLifetime(previous) {}
    withUnsafePointer(to: value) { pointer in
      members.forEachMember { member in
        guard receivesChange(member, from: origin) else { return }
        tracedWrite(at: pointer, to: member, reverting: false, extras: extras, dead: &dead)
      }
    }
    // Sinks: owned and keyed, in the order they were added.
    var keyed = sinks.map(Array.init) ?? []
    var owned: [Member] = []
    members.forEachMember { member in if member.isSink { owned.append(member) } }
    while !keyed.isEmpty || !owned.isEmpty {
      if let sink = keyed.first, owned.first.map({ sink.order < $0.sinkOrder }) ?? true {
        keyed.removeFirst()
        guard sink.isReady && isActive else { continue }
        trace(.sinkCalled(key: sink.tracedKey))
        sink.body(value)
      } else {
        let member = owned.removeFirst()
        guard member.takesDelivery && isActive else { continue }
        // An owner that is gone is found dead by the write, and its sink is not called.
        guard let owner = member.object else {
          write(value, to: member, dead: &dead)
          continue
        }
        trace(.sinkCalled(key: tracedName(of: member)))
        withExtendedLifetime(owner) { write(value, to: member, dead: &dead) }
      }
    }
  }

  // A write, told before the member's setter runs (`traceWriting`, with the value converted),
  // or after the write closure returns when it ran no setter: skipped, failed, or
  // (`reverting`) a revert; those name the chain's value, described only then.
  private func tracedWrite(
    at value: UnsafePointer<Value>, to member: Member, reverting: Bool, extras: AnyChainExtras,
    dead: inout DeadMembers
  ) {
    extras.writeOutcome.store(TracedWrite.written, ordering: .relaxed)
    withLock { held in held.extras?.pendingWrite = (ObjectIdentifier(member), reverting) }
    let deadCount = dead.count
    write(at: value, to: member, dead: &dead)
    withLock { held in held.extras?.pendingWrite = nil }
    let outcome = extras.writeOutcome.load(ordering: .relaxed)
    if reverting {
      if outcome != TracedWrite.traced {
        trace(.reverted(member: tracedName(of: member), value: describeValue(value.pointee)))
      }
      return
    }
    guard dead.count == deadCount, member.write != nil else { return }
    switch outcome {
    case TracedWrite.traced: break
    case TracedWrite.skipped:
      trace(.memberSkipped(member: tracedName(of: member)))
    case TracedWrite.failed:
      trace(.conversionFailed(member: tracedName(of: member), value: describeValue(value.pointee)))
    default:
      trace(.memberWritten(member: tracedName(of: member), value: describeValue(value.pointee)))
    }
  }

  // After a filter rejected `value` and the origin was reverted: the chain's reject handler.
  @usableFromInline
  @inline(never)
  final func rejected(_ value: Value) {
    guard let handler = withLock({ extras($0)?.rejectHandler }) else { return }
    handler(value)
  }

  func setRejectHandler(_ handler: @escaping (Value) -> Void) -> Bool {
    let replaced = withLock { held -> ((Value) -> Void)?? in
      guard isActive else { return .none }
      let extras = extrasMade(held)
      defer { extras.rejectHandler = handler }
      return .some(extras.rejectHandler)
    }
    withExtendedLifetime(replaced) {}
    return replaced != nil
  }
}

extension Sink {
  // `values` subscriptions have keys of their own (Chain+Values.swift), named alike in events.
  var tracedKey: String { isValuesSubscription ? "values" : key }
  var isValuesSubscription: Bool { key.hasPrefix(Sink.valuesKeyPrefix) }
  static var valuesKeyPrefix: String { "\u{1}values#" }
}
