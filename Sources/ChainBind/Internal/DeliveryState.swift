// Who delivers a chain's changes, and what that delivery is doing: the states of the chain's
// one-at-a-time delivery (Docs/Architecture.md, "The delivery"), one method per event. A
// transition the protocol does not have is an internal inconsistency, and traps.
//
//   idle ──begin──▶ delivering(thread, .turn) ──end──▶ idle
//                     │  ▲            │
//           beginWork │  │ endWork    │ handOff (past the call's share, or isolated meanwhile)
//                     ▼  │            ▼
//            delivering(thread, .work) handedOff ──resume──▶ delivering(job's thread, .turn)
//                                         └──────abandon (its actor is gone)──────▶ idle
@usableFromInline
struct DeliveryState {
  @usableFromInline
  enum Phase: Equatable {
    // No thread delivers: a change is delivered by the thread that makes it, before its set
    // returns.
    case idle
    // `thread` delivers; what other threads change meanwhile is queued.
    case delivering(thread: UInt, activity: Activity)
    // A job (a relay, or the chain's actor's) is on its way to deliver what is queued; no thread
    // delivers now, and every change is queued for it.
    case handedOff
  }

  @usableFromInline
  enum Activity: Equatable {
    // Delivering changes, one turn at a time.
    case turn
    // Running work (a re-read, a first call, a sync): what it changes goes right after it.
    // `isOwn`: the work is this call's own (its changes count against the feedback limit);
    // `nests`: its first change may be delivered at once, nested in it (`takeNestedTurn`).
    case work(isOwn: Bool, nests: Bool)
  }

  @usableFromInline var phase = Phase.idle

  @inlinable init() {}

  @inlinable var isDelivering: Bool { phase != .idle }

  @inlinable
  func isDelivering(on thread: UInt) -> Bool {
    guard case .delivering(thread, _) = phase else { return false }
    return true
  }

  // The work running on the delivering thread, if any.
  @inlinable
  var work: (isOwn: Bool, nests: Bool)? {
    guard case .delivering(_, .work(let isOwn, let nests)) = phase else { return nil }
    return (isOwn, nests)
  }

  // A change, or work, found the chain idle: this thread delivers it.
  @inlinable
  mutating func begin(on thread: UInt) {
    guard phase == .idle else { inconsistency("begin") }
    phase = .delivering(thread: thread, activity: .turn)
  }

  // The delivery ends: nothing is queued, or the chain was released.
  @inlinable
  mutating func end() {
    guard case .delivering = phase else { inconsistency("end") }
    phase = .idle
  }

  @usableFromInline
  mutating func beginWork(isOwn: Bool, nests: Bool) {
    guard case .delivering(let thread, .turn) = phase else {
      inconsistency("work begins")
    }
    phase = .delivering(thread: thread, activity: .work(isOwn: isOwn, nests: nests))
  }

  @usableFromInline
  mutating func endWork() {
    guard case .delivering(let thread, _) = phase else { inconsistency("work ends") }
    phase = .delivering(thread: thread, activity: .turn)
  }

  // The work's first change is delivered now, nested in it; its later changes are queued as from
  // a turn.
  @usableFromInline
  mutating func takeNestedTurn() {
    guard case .delivering(let thread, .work(_, nests: true)) = phase else {
      inconsistency("a nested turn")
    }
    phase = .delivering(thread: thread, activity: .turn)
  }

  // The fair-delivery transition: what is queued goes to a job, and this thread returns.
  @usableFromInline
  mutating func handOff() {
    guard case .delivering = phase else { inconsistency("hand-off") }
    phase = .handedOff
  }

  // The job a delivery was handed to starts on `thread`.
  @usableFromInline
  mutating func resume(on thread: UInt) {
    guard phase == .handedOff else { inconsistency("resume") }
    phase = .delivering(thread: thread, activity: .turn)
  }

  // The job a delivery was handed to will never run (its actor is gone).
  @usableFromInline
  mutating func abandon() {
    guard phase == .handedOff else { inconsistency("abandon") }
    phase = .idle
  }

  @usableFromInline
  @inline(never)
  func inconsistency(_ event: StaticString) -> Never {
    preconditionFailure("Internal inconsistency in a chain's delivery: \(event) while \(phase)")
  }
}
