@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Observation
import Synchronization
import Testing

// Docs/Semantics.md, "Threading": several threads change flat, nested and computed sources,
// replace nested links, and add, unbind and release receivers and sinks, at random; once they
// have all finished, every member of every chain holds the chain's value, which is what its
// sender reads now. The seed of a failing run is in the failure's message; set
// CHAINBIND_CONVERGENCE_SEED to replay one, CHAINBIND_CONVERGENCE_STEPS for longer runs.

/// A nested link; its `n` is guarded by its node's `innerLock`, which `lockedN` takes.
private final class Leaf: @unchecked Sendable {
  @Bound var n: Int
  let lock: NSRecursiveLock
  var lockedN: Int { lock.withLock { n } }
  init(_ n: Int, lock: NSRecursiveLock) {
    self.n = n
    self.lock = lock
  }
}

/// A source object, confined by the test's threads as a user would confine it.
///
/// `n` is behind `nLock`, the link and the link's value behind `innerLock`. The locks are
/// recursive: a set delivers, and a delivery may read `total` on the same thread.
private final class Node: @unchecked Sendable {
  let nLock = NSRecursiveLock()
  let innerLock = NSRecursiveLock()
  @Bound var n = 0
  @Bound var inner: Leaf
  // The nested chain's path, `\.lockedInner.lockedN`, reads under the lock at each link.
  var lockedInner: Leaf { innerLock.withLock { inner } }
  var total: Int {
    let n = nLock.withLock { self.n }
    return n + innerLock.withLock { inner.n }
  }
  var innerN: Int { innerLock.withLock { inner.n } }
  // An `@Observable` source, and a list, each behind a lock of its own.
  let settingsLock = NSRecursiveLock()
  let settings: Settings
  let itemsLock = NSRecursiveLock()
  @Bound var items: [Int] = []

  init() {
    inner = Leaf(0, lock: innerLock)
    settings = Settings(lock: settingsLock)
  }
}

@Observable
private final class Settings: @unchecked Sendable {
  var volume = 0
  @ObservationIgnored let lock: NSRecursiveLock
  var lockedVolume: Int { lock.withLock { volume } }
  init(lock: NSRecursiveLock) { self.lock = lock }
}

/// The changes a list sink got, to check that they chain (`next.old == previous.new`).
private final class ListLog: Sendable {
  private let changes = LockedBox<[String: [ListChange<Int>]]>([:])
  func record(_ key: String, _ change: ListChange<Int>) {
    changes.withLock { $0[key, default: []].append(change) }
  }
  var all: [String: [ListChange<Int>]] { changes.withLock { $0 } }
}

private final class Receiver: @unchecked Sendable {
  var value = -1
}

/// The last value each sink got.
///
/// A removed sink is forgotten for good: a call that another thread's delivery had begun before
/// the removal may still arrive, and is not checked.
private final class SinkLog: Sendable {
  private let last = LockedBox<(values: [String: Int], removed: Set<String>)>(([:], []))
  func record(_ key: String, _ value: Int) {
    last.withLock { if !$0.removed.contains(key) { $0.values[key] = value } }
  }
  func remove(_ key: String) {
    last.withLock {
      $0.removed.insert(key)
      $0.values[key] = nil
    }
  }
  var values: [String: Int] { last.withLock { $0.values } }
}

private enum Kind: CaseIterable { case flat, total, nested, observable }

/// One chain of the run and the receivers bound to it now.
private final class Tracked: @unchecked Sendable {
  let node: Node
  let kind: Kind
  let chain: Chain<Int>
  let receivers = LockedBox<[Receiver]>([])

  init(node: Node, kind: Kind) {
    self.node = node
    self.kind = kind
    switch kind {
    case .flat: chain = Bind.inout(node, \.n)
    case .total: chain = Bind.in(node, \.total)
    case .nested: chain = Bind.in(node, \.lockedInner.lockedN)
    case .observable: chain = Bind.in(node.settings, \.lockedVolume)
    }
  }

  var expected: Int {
    switch kind {
    case .flat: node.nLock.withLock { node.n }
    case .total: node.total
    case .nested: node.innerN
    case .observable: node.settingsLock.withLock { node.settings.volume }
    }
  }
}

@Suite("Convergence: random concurrent changes, binds and releases settle", .serialized)
struct ConvergenceRandomTests {
  static var seeds: [UInt64] {
    if let text = ProcessInfo.processInfo.environment["CHAINBIND_CONVERGENCE_SEED"],
      let seed = UInt64(text)
    {
      return [seed]
    }
    return [1, 2, 3, 4, 5, 6, 7, 8]
  }

  static var steps: Int {
    ProcessInfo.processInfo.environment["CHAINBIND_CONVERGENCE_STEPS"].flatMap(Int.init) ?? 3_000
  }

  @Test("three threads, then quiescence: every member at its chain's value", arguments: seeds)
  func everyMemberSettlesAtTheLatestValue(seed: UInt64) {
    let run = RandomRun()
    let done = run.start(seed: seed, steps: Self.steps)
    done.wait()
    // Quiescence: what the threads' calls left to relays is delivered too.
    #expect(run.waitUntilIdle())
    for failure in run.failures(seed: seed) { Issue.record(Comment(rawValue: failure)) }
    run.unbind()
  }

  @Test(
    "main-actor chains: once the actor has run what was queued, every member at its value",
    arguments: seeds.prefix(4))
  @MainActor
  func isolatedChainsSettleOnTheActor(seed: UInt64) async {
    let run = RandomRun()
    run.isolateToThisActor()
    let done = run.start(seed: seed, steps: Self.steps / 2)
    await withCheckedContinuation { continuation in
      done.notify(queue: .global()) { @Sendable in continuation.resume() }
    }
    // The threads are done; the actor delivers what they queued for it.
    var failures = run.failures(seed: seed)
    var turns = 0
    while !failures.isEmpty && turns < 100_000 {
      await Task.yield()
      turns += 1
      if turns % 100 == 0 { failures = run.failures(seed: seed) }
    }
    for failure in failures { Issue.record(Comment(rawValue: failure)) }
    run.unbind()
  }
}

/// One randomized run: the objects, their chains, and what the sinks got.
private final class RandomRun: @unchecked Sendable {
  let nodes = (0..<3).map { _ in Node() }
  let chains: [Tracked]
  let lists: [Chain<[Int]>]
  let listLog = ListLog()
  let sinks = SinkLog()

  init() {
    chains = nodes.flatMap { node in Kind.allCases.map { Tracked(node: node, kind: $0) } }
    lists = nodes.map { Bind.in($0, \.items) }
  }

  // Adds an error handler from the caller's actor: every chain is isolated to it.
  func isolateToThisActor(isolation: isolated (any Actor)? = #isolation) {
    for target in chains { target.chain.onError { _ in } }
    for list in lists { list.onError { _ in } }
  }

  // Whether every chain is idle (within the watchdog's time).
  func waitUntilIdle() -> Bool {
    chains.allSatisfy { ChainBindTests.waitUntilIdle($0.chain) }
      && lists.allSatisfy { ChainBindTests.waitUntilIdle($0) }
  }

  // Three threads of `steps` random operations; the group is done when they all are.
  func start(seed: UInt64, steps: Int) -> DispatchGroup {
    let done = DispatchGroup()
    for thread in 0..<3 {
      done.enter()
      Thread { [self] in
        var random = SplitMix64(seed: seed &* 31 &+ UInt64(thread))
        for step in 0..<steps { operate(&random, thread: thread, step: step) }
        done.leave()
      }.start()
    }
    return done
  }

  func operate(_ random: inout SplitMix64, thread: Int, step: Int) {
    let (sinks, listLog) = (self.sinks, self.listLog)
    let target = random.pick(chains)
    let node = target.node
    switch random.below(14) {
    case 0, 1, 2:
      let value = random.below(1_000)
      node.nLock.withLock { node.n = value }
    case 3, 4:
      let value = random.below(1_000)
      node.innerLock.withLock { node.inner.n = value }
    case 5:
      let leaf = Leaf(random.below(1_000), lock: node.innerLock)
      node.innerLock.withLock { node.inner = leaf }
    case 6, 7:
      let receiver = Receiver()
      target.receivers.withLock { $0.append(receiver) }
      target.chain.out(receiver, \.value)
    case 8:
      // Unbound, or released: the chain holds receivers weakly.
      let removed = target.receivers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
      if let removed, random.chance(50) { Bind.unbind(removed) }
    case 10:
      let value = random.below(1_000)
      node.settingsLock.withLock { node.settings.volume = value }
    case 11, 12:
      let edit = random.below(3)
      let value = random.below(50)
      node.itemsLock.withLock {
        switch edit {
        case 0: node.items.append(value)
        case 1: if !node.items.isEmpty { node.items.remove(at: value % node.items.count) }
        default: node.items.insert(value, at: 0)
        }
      }
    case 13:
      let index = nodes.firstIndex { $0 === node } ?? 0
      let key = "list\(index)-t\(thread)-\(step)"
      lists[index].outChanges(key: key) { listLog.record(key, $0) }
    default:
      // Keys are never reused: a sink added again under a key is a new sink.
      let key = "t\(thread)-\(step)"
      target.chain.out(key: key) { sinks.record("\(ObjectIdentifier(target))\(key)", $0) }
      if random.chance(30) {
        let old = "t\(thread)-\(random.below(step + 1))"
        target.chain.removeOut(key: old)
        sinks.remove("\(ObjectIdentifier(target))\(old)")
      }
    }
  }

  // What differs from the rules once every thread has finished (Docs/Semantics.md, "Threading").
  func failures(seed: UInt64) -> [String] {
    var found: [String] = []
    for target in chains {
      let expected = target.expected
      if target.chain.currentValue != expected {
        found.append("seed \(seed): \(target.kind) chain's value")
      }
      for receiver in target.receivers.withLock({ $0 }) {
        if receiver.value != expected {
          found.append("seed \(seed): a receiver of a \(target.kind) chain")
        }
      }
      for (key, value) in sinks.values where key.hasPrefix("\(ObjectIdentifier(target))") {
        if value != expected { found.append("seed \(seed): sink \(key) of a \(target.kind) chain") }
      }
    }
    for (index, node) in nodes.enumerated() {
      let expected = node.itemsLock.withLock { node.items }
      for (key, changes) in listLog.all where key.hasPrefix("list\(index)-") {
        if changes.first?.isInitial != true {
          found.append("seed \(seed): list sink \(key): no initial change")
        }
        for (previous, next) in zip(changes, changes.dropFirst()) where next.old != previous.new {
          found.append(
            "seed \(seed): list sink \(key): a change does not start where the last ended")
        }
        if changes.last?.new != expected {
          found.append("seed \(seed): list sink \(key): not at the list")
        }
      }
    }
    return found
  }

  func unbind() {
    for target in chains { target.chain.unbind() }
    for list in lists { list.unbind() }
  }
}
