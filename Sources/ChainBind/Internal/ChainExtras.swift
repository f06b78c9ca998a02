import Synchronization

// What a chain rarely has, made on first use; guarded by the chain's lock.
@usableFromInline
class AnyChainExtras {
  // Kept when the chain is released: errors about adding to it still reach it.
  @exclusivity(unchecked) final var errorHandler: ((BindingError) -> Void)?
  // The change the chain's list sinks share (ListChange.swift).
  @exclusivity(unchecked) final var listChange: AnyObject?
  // Members that left the chain while it delivered (`AnyChain.hasRetired`).
  @exclusivity(unchecked) final var retired: ContiguousArray<Member> = []
  // While the delivering thread runs queued work: where the next change it makes is queued.
  @exclusivity(unchecked) final var insertion: Int?
  // The `feedbackDepth` of the queued change being delivered; 0 outside such a turn.
  @exclusivity(unchecked) final var deliveredDepth: Int32 = 0
  // The chain's tracer (Tracing.swift), and what the last traced write did.
  @exclusivity(unchecked) final var tracer: ((ChainEvent) -> Void)?
  @usableFromInline final let writeOutcome = Atomic<UInt8>(0)
  // The member a traced write is about to write, and whether it reverts it, for its write
  // closure to tell before the setter runs (`AnyChain.traceWriting`).
  @exclusivity(unchecked) final var pendingWrite: (member: ObjectIdentifier, reverting: Bool)?
  // For a traced chain: its code, and its members' names (a key path's description is slow),
  // by member, each kept with its member so that its address names no other.
  @exclusivity(unchecked) final var tracedCode: ChainCode?
  @exclusivity(unchecked) final var tracedNames: [ObjectIdentifier: (Member, String)] = [:]
  // How many members the last search for dead ones left (`AnyChain.pruneDeadMembers`).
  @exclusivity(unchecked) final var membersAfterSearch = 0
  // Numbers keyed and owned sinks in the order they were added, across both.
  @exclusivity(unchecked) private final var sinksAdded: Int32 = 0

  @usableFromInline init() {}

  final func numberSink() -> Int32 {
    sinksAdded += 1
    return sinksAdded
  }
}

@usableFromInline
final class ChainExtras<Value>: AnyChainExtras {
  @usableFromInline @exclusivity(unchecked) final var filters: ContiguousArray<(Value) -> Bool>?
  @usableFromInline @exclusivity(unchecked) final var sinks: ContiguousArray<Sink<Value>>?
  @usableFromInline @exclusivity(unchecked) final var queue: PendingQueue<Queued<Value>>?
  // Called with each rejected value, after the revert (`Chain.onReject`).
  @usableFromInline @exclusivity(unchecked) final var rejectHandler: ((Value) -> Void)?
}

// What waits for the thread delivering a chain's changes.
@usableFromInline
enum Queued<Value> {
  case change(PendingChange<Value>)
  // Work that must run in the delivery's order: a tracked member's re-read, the first value of
  // a member or sink added while another thread delivers.
  case work(() -> Void)
}

@usableFromInline
struct PendingChange<Value> {
  let origin: Member
  let value: Value
  // Handed to the chain's actor after its filters accepted it: they do not run again.
  var isAccepted = false
  // How many changes led to this one, each made while the one before it was delivered, by the
  // thread delivering it (its sink, setter or conversion): 0 for a change made outside the
  // delivery. Past the feedback limit, a runaway loop (`ChainCore.deliverQueue`).
  var feedbackDepth: Int32 = 0
  var isFeedback: Bool { feedbackDepth > 0 }
  // Made by the thread delivering, during its delivery (a sink's, setter's or work's change):
  // delivered by it, where other threads' changes wait for a relay (Docs/Semantics.md,
  // "Fair delivery").
  var isOwn = false
}

// A keyed sink. Its state lets a delivery that already copied the sink list skip a sink that was
// removed or replaced meanwhile, or that has not had its first call yet (it was added while
// another thread delivered: that call comes in the delivery's order, Docs/Semantics.md, "Sinks").
@usableFromInline
final class Sink<Value>: @unchecked Sendable {
  let key: String
  let body: (Value) -> Void
  // Given the chain's value when a sink without a first call is added (a list sink's start).
  let start: ((Value) -> Void)?
  // Its place among the chain's sinks, owned ones included; set under the chain lock when added.
  @exclusivity(unchecked) var order: Int32 = 0
  private let state = Atomic<UInt8>(Sink.waiting)

  private static var waiting: UInt8 { 0 }
  private static var ready: UInt8 { 1 }
  private static var removed: UInt8 { 2 }

  init(key: String, body: @escaping (Value) -> Void, start: ((Value) -> Void)? = nil) {
    self.key = key
    self.body = body
    self.start = start
  }

  var isRemoved: Bool { state.load(ordering: .acquiring) == Self.removed }
  // Called by deliveries: it had its first call (or was added without one) and is not removed.
  var isReady: Bool { state.load(ordering: .acquiring) == Self.ready }
  func markRemoved() { state.store(Self.removed, ordering: .releasing) }
  func markReady() {
    _ = state.compareExchange(
      expected: Self.waiting, desired: Self.ready, ordering: .acquiringAndReleasing)
  }
}
