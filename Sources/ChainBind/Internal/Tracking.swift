import Synchronization

// Tracked sources (Docs/Semantics.md, "Tracked sources"): a sending member whose key path reads
// @Bound properties other than its own one-step property (a nested path, a computed property)
// observes every @Bound property the read touched. A change of any of them makes the member read
// its key path again, on the changing thread, collecting the properties anew, and send the value
// when it differs from the one it last read.

// Collects the @Bound properties one read touches, on the reading thread. The getters report to
// it through `BoundProbe` (BoundToken.swift), which the same thread-local pointer reaches.
final class DependencyCollector {
  private(set) var tokens: [BoundToken] = []

  // A @Bound property was read: observe it through its storage's token, made if it has none.
  func visit<Value>(_ bound: inout Bound<Value>) {
    let token: BoundToken
    if let existing = bound.token {
      token = existing
    } else {
      token = BoundToken()
      bound.token = token
    }
    if !tokens.contains(where: { $0 === token }) { tokens.append(token) }
  }
}

// What a tracked member observes, and the value it last read. Not generic: what depends on the
// member's types is in `reread`.
//
// @unchecked Sendable: `state` lives in its lock; the rest is fixed at creation.
final class TrackedSource: @unchecked Sendable {
  private struct State {
    // Weak: the objects along a path are held weakly (Docs/Semantics.md, "Tracked sources").
    var dependencies: [Weak<BoundToken>] = []
    var isEnded = false
  }

  private let state = Locked(State())
  // Weak: a notification already under way may outlive the membership.
  weak var member: Member?
  // Reads the member's key path again, collecting its dependencies; returns the tokens read and
  // whether the value differs from the last one (then it has sent it, unless `sending` is false).
  private let reread: (TrackedSource, _ sending: Bool) -> [BoundToken]?

  init(member: Member, reread: @escaping (TrackedSource, Bool) -> [BoundToken]?) {
    self.member = member
    self.reread = reread
  }

  // Observes `tokens` and stops observing the rest. No token lock is held while another is
  // taken, and none with this source's lock.
  func observe(_ tokens: [BoundToken]) {
    let (added, removed) = state.withLock { state -> ([BoundToken], [BoundToken]) in
      guard !state.isEnded else { return ([], []) }
      let old = state.dependencies.compactMap(\.object)
      state.dependencies = tokens.map { Weak($0) }
      return (
        tokens.filter { token in !old.contains { $0 === token } },
        old.filter { token in !tokens.contains { $0 === token } }
      )
    }
    for token in added { token.addObserver(self) }
    for token in removed { token.removeObserver(self) }
  }

  // The membership ended: stop observing. Registry lock held; takes token locks only.
  func end() {
    let old = state.withLock { state -> [BoundToken] in
      state.isEnded = true
      defer { state.dependencies = [] }
      return state.dependencies.compactMap(\.object)
    }
    for token in old { token.removeObserver(self) }
  }

  // One of the observed properties was set, on this thread.
  func dependencyChanged() {
    guard let member, member.isAttached else { return }
    // The chain writing through the member's own path: not a change (no echo), but the value
    // and the properties read are refreshed.
    guard let tokens = reread(self, !member.isWriting) else { return }
    observe(tokens)
  }

  // An observed property's object was deallocated. When it was the member's own object, the
  // membership ends with it (Docs/Semantics.md, "Lifetime").
  func dependencyEnded() {
    guard let member else { return }
    if member.object == nil, member.isAttached { member.chain.registry.detach(member) }
  }
}

struct Weak<Object: AnyObject> {
  weak var object: Object?

  init(_ object: Object) {
    self.object = object
  }
}

extension BoundToken {
  func addObserver(_ source: TrackedSource) {
    lock.lock()
    observers.append(source)
    observerCount.store(observers.count, ordering: .relaxed)
    lock.unlock()
  }

  func removeObserver(_ source: TrackedSource) {
    lock.lock()
    var removed: TrackedSource?
    if let index = observers.firstIndex(where: { $0 === source }) {
      removed = observers.remove(at: index)
    }
    observerCount.store(observers.count, ordering: .relaxed)
    lock.unlock()
    withExtendedLifetime(removed) {}
  }

  // Out of line: a set of a property no tracked member observes pays one relaxed load.
  @usableFromInline
  @inline(never)
  func notifyObservers() {
    lock.lock()
    let current = observers
    lock.unlock()
    for source in current { source.dependencyChanged() }
  }

  func observersEnded() {
    lock.lock()
    let current = observers
    observers = []
    observerCount.store(0, ordering: .relaxed)
    lock.unlock()
    for source in current { source.dependencyEnded() }
  }
}

extension ChainCore {
  // Makes `member` a tracked member reading `keyPath` of `object` through `read`, observing
  // `tokens`, with `value` as the value it last read.
  func track<Object: AnyObject, Target>(
    _ member: Member, reading read: @escaping (Object) -> Target, last value: Target,
    observing tokens: [BoundToken]
  ) {
    let last = Locked(value)
    let source = TrackedSource(member: member) { source, sending in
      guard let member = source.member, let object = member.object else { return nil }
      let (value, tokens) = Tracking.collect { read(unsafeDowncast(object, to: Object.self)) }
      // Compared and replaced outside the lock: `==` and the old value's deinit are user code.
      var previous = last.withLock { $0 }
      var current = value
      let changed = !bindIsEqual(&previous, &current)
      if changed {
        let replaced = last.withLock { last -> Target in
          defer { last = value }
          return last
        }
        withExtendedLifetime(replaced) {}
      }
      if changed && sending, let send = member.send {
        withUnsafePointer(to: value) { send(nil, $0, member) }
      }
      return tokens
    }
    member.tracked = source
    source.observe(tokens)
  }
}

enum Tracking {
  // Runs `read` with a collector for this thread, and returns what it read and the tokens of the
  // @Bound properties it touched.
  static func collect<Value>(_ read: () -> Value) -> (Value, [BoundToken]) {
    let collector = DependencyCollector()
    let value = BoundProbe.collecting(into: collector, read)
    return (value, collector.tokens)
  }
}
