@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Observation
import Testing

// Docs/Semantics.md, "Tracked sources" and "Fair delivery": a chain with a flat member and a
// tracked one (computed, nested or `@Observable`), each set at random on two threads. Right after
// they finish, while relays may still deliver what they left, one more set of either member is
// the last change made: once the chain is idle, it is the chain's value, its receiver's and its
// sink's. A re-read that waited behind the other member's change must not end the chain at an
// older value. CHAINBIND_LAST_CHANGE_SEED replays one seed.
//
// The last set of a nested member replaces a link: a set of the new link's leaf, before the
// re-read the link's replacement queued has reached it, is read by that re-read unobserved, and
// may arrive before the other member's change (Docs/Semantics.md, "Tracked sources").

private final class Leaf: @unchecked Sendable {
  @Bound var n = 0
  let lock: NSRecursiveLock
  var lockedN: Int { lock.withLock { n } }
  init(lock: NSRecursiveLock) { self.lock = lock }
}

@Observable
private final class Level: @unchecked Sendable {
  var value = 0
  @ObservationIgnored let lock = NSRecursiveLock()
  var lockedValue: Int { lock.withLock { value } }
}

/// The sources, each set under its own lock, as a user would confine them.
///
/// The locks are recursive: a set delivers, and the delivery reads the source on the same thread.
private final class Sources: @unchecked Sendable {
  let flatLock = NSRecursiveLock()
  @Bound var flat = 0
  let computedLock = NSRecursiveLock()
  @Bound var base = 0
  var computed: Int { computedLock.withLock { base } }
  let innerLock = NSRecursiveLock()
  @Bound var inner: Leaf
  var lockedInner: Leaf { innerLock.withLock { inner } }
  let level = Level()

  init() { inner = Leaf(lock: innerLock) }

  func setFlat(_ value: Int) { flatLock.withLock { flat = value } }

  func setTracked(_ kind: LastChangeKind, _ value: Int, replacingLink: Bool) {
    switch kind {
    case .computed: computedLock.withLock { base = value }
    case .nested where replacingLink:
      let leaf = Leaf(lock: innerLock)
      leaf.n = value
      innerLock.withLock { inner = leaf }
    case .nested: innerLock.withLock { inner.n = value }
    case .observable: level.lock.withLock { level.value = value }
    }
  }
}

enum LastChangeKind: CaseIterable, Sendable {
  case computed, nested, observable
}

private final class Receiver: @unchecked Sendable {
  let lock = NSRecursiveLock()
  private var stored = -1
  var value: Int {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

@Suite("The last change made is the chain's value, whatever waited", .serialized)
struct LastChangeRandomTests {
  static var seeds: [UInt64] {
    if let text = ProcessInfo.processInfo.environment["CHAINBIND_LAST_CHANGE_SEED"],
      let seed = UInt64(text)
    {
      return [seed]
    }
    return Array(1...6)
  }

  @Test(arguments: LastChangeKind.allCases, seeds)
  func theLastSetWins(_ kind: LastChangeKind, seed: UInt64) {
    let sources = Sources()
    let receiver = Receiver()
    let last = LockedBox(Int.min)
    let chain = Bind.in(sources, \.flat)
    switch kind {
    case .computed: chain.in(sources, \.computed)
    case .nested: chain.in(sources, \.lockedInner.lockedN)
    case .observable: chain.in(sources.level, \.lockedValue)
    }
    chain.out(receiver, \.value).out(key: "last") { value in last.withLock { $0 = value } }
    var failures: [String] = []
    for round in 0..<20 {
      let done = DispatchGroup()
      for thread in 0..<2 {
        done.enter()
        Thread {
          var random = SplitMix64(seed: seed &* 1_000 &+ UInt64(round * 2 + thread))
          for _ in 0..<200 {
            let value = random.below(1_000)
            if random.chance(50) {
              sources.setFlat(value)
            } else {
              sources.setTracked(kind, value, replacingLink: random.chance(30))
            }
          }
          done.leave()
        }.start()
      }
      done.wait()
      // Made now, while relays may still deliver what the threads left.
      let final = -1 - round
      var random = SplitMix64(seed: seed &+ UInt64(round))
      let set: String
      if random.chance(50) {
        set = "the flat member"
        sources.setFlat(final)
      } else {
        let replacingLink = kind == .nested
        set = replacingLink ? "a link" : "the tracked member"
        sources.setTracked(kind, final, replacingLink: replacingLink)
      }
      #expect(waitUntilIdle(chain))
      let ends = (chain.currentValue, receiver.value, last.withLock { $0 })
      if ends != (final, final, final) {
        failures.append(
          "seed \(seed) round \(round): \(set) set to \(final), the chain ended at \(ends)")
      }
    }
    #expect(failures.isEmpty, "\(failures)")
    chain.unbind()
  }
}
