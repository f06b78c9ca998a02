@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Testing

// Docs/Semantics.md, "Threading" under load: many threads binding, changing their own chains,
// unbinding, releasing objects that other threads' chains hold weakly, and sinks that bind and
// unbind other chains. Run under ThreadSanitizer by .ci/run (`swift test --sanitize=thread`). Every
// test works in a registry of its own and checks at the end that every chain was released and every
// object deallocated.

/// Objects handed from one thread to another, behind a lock ThreadSanitizer can see.
private final class Exchange<Object: AnyObject>: @unchecked Sendable {
  private let lock = NSLock()
  private var objects: [Object] = []

  func put(_ object: Object) {
    lock.lock()
    objects.append(object)
    lock.unlock()
  }

  func take() -> Object? {
    lock.lock()
    defer { lock.unlock() }
    return objects.popLast()
  }
}

/// Weak references collected from all threads, checked once every thread is done.
private final class WeakSet: @unchecked Sendable {
  private struct Entry {
    weak var object: AnyObject?
  }
  private let lock = NSLock()
  private var entries: [Entry] = []

  func add(_ object: AnyObject) {
    lock.lock()
    entries.append(Entry(object: object))
    lock.unlock()
  }

  var aliveCount: Int {
    lock.lock()
    defer { lock.unlock() }
    return entries.filter { $0.object != nil }.count
  }

  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return entries.count
  }
}

/// Failures found on worker threads.
private final class FailureLog: @unchecked Sendable {
  private let lock = NSLock()
  private var messages: [String] = []

  func record(_ message: String) {
    lock.lock()
    messages.append(message)
    lock.unlock()
  }

  var all: [String] {
    lock.lock()
    defer { lock.unlock() }
    return messages
  }
}

private let workers = 8
private let rounds = 150

@Suite struct StressTests {
  @Test func threadsBindChangeUnbindAndReleaseEachOthersObjects() {
    let registry = ScopedRegistry()
    let exchange = Exchange<Plain>()
    let tracked = WeakSet()
    let failures = FailureLog()

    DispatchQueue.concurrentPerform(iterations: workers) { worker in
      registry.withScope {
        for round in 0..<rounds {
          let model = Model()
          let mine = Plain()
          tracked.add(model)
          tracked.add(mine)
          let chain = Bind.inout(model, \.int).out(mine, \.int)
          // A plain object another thread made: held weakly here, released over there.
          if let theirs = exchange.take() {
            chain.out(theirs, \.int)
          }
          let handed = Plain()
          tracked.add(handed)
          exchange.put(handed)

          let value = worker * 10_000 + round
          model.int = value
          if mine.int != value { failures.record("worker \(worker) round \(round): \(mine.int)") }
          if round.isMultiple(of: 3) {
            chain.unbind()
            model.int = -1
            if mine.int != value { failures.record("unbound chain wrote \(mine.int)") }
          } else if round % 3 == 1 {
            Bind.unbind(model)
          }
          // Otherwise the chain ends when `model` is deallocated at the end of the round.
        }
      }
    }
    while exchange.take() != nil {}

    #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    #expect(registry.activeChainCount == 0)
    #expect(tracked.count == workers * rounds * 3)
    #expect(tracked.aliveCount == 0)
  }

  @Test func sinksBindAndUnbindOtherChainsOnManyThreads() {
    let registry = ScopedRegistry()
    let tracked = WeakSet()
    let failures = FailureLog()

    DispatchQueue.concurrentPerform(iterations: workers) { worker in
      registry.withScope {
        let source = Model()
        let target = Plain()
        tracked.add(source)
        tracked.add(target)
        let chain = Bind.inout(source, \.int)
          .out(key: "spawn") { value in
            // A sink that binds, uses and unbinds a chain of its own.
            let inner = Model()
            let innerLabel = Plain()
            let innerChain = Bind.inout(inner, \.string).out(innerLabel, \.string)
            inner.string = "\(value)"
            if innerLabel.string != "\(value)" {
              failures.record("inner chain of worker \(worker) missed \(value)")
            }
            innerChain.unbind()
            tracked.add(inner)
            tracked.add(innerLabel)
          }
          .out(target, \.int)
        for round in 1...rounds {
          source.int = round
          if target.int != round { failures.record("worker \(worker) missed \(round)") }
        }
        chain.unbind()
      }
    }

    #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    #expect(registry.activeChainCount == 0)
    #expect(tracked.aliveCount == 0)
  }

  @Test func objectsReleasedOnOtherThreadsLeaveTheirChains() {
    let registry = ScopedRegistry()
    let models = Exchange<Model>()
    let tracked = WeakSet()
    let sharedTarget = Plain()

    registry.withScope {
      for _ in 0..<(workers * rounds) {
        let model = Model()
        tracked.add(model)
        Bind.inout(model, \.int).out(sharedTarget, \.double, convert: { Double($0) })
        models.put(model)
      }
    }
    // Each binding moved `sharedTarget` into the newest chain; every chain keeps its model.
    #expect(registry.activeChainCount == workers * rounds)

    // Every model is released on some worker thread; its @Bound token unbinds it there.
    DispatchQueue.concurrentPerform(iterations: workers) { _ in
      while let model = models.take() {
        model.int += 1
      }
    }

    #expect(tracked.aliveCount == 0)
    #expect(registry.activeChainCount == 0)
  }

  // Members whose `@Bound` objects die as they join, while another thread adds and unbinds a
  // plain member of the same chain, which prunes the chain's dead members: pruning must not
  // touch a dying member's token (it crashed, or lost the chain's lock).
  @Test func membersDieWhileAnotherThreadPrunesTheirChain() {
    let joins = ProcessInfo.processInfo.environment["CHAINBIND_TSAN"] == nil ? 20_000 : 2_000
    let registry = ScopedRegistry()
    registry.withScope {
      for _ in 0..<3 {
        let head = Model()
        let chain = Bind.in(head, \.int)
        let joining = (0..<2).map { _ in
          startThread {
            for _ in 0..<joins { chain.in(Model(), \.int) }
          }
        }
        let pruning = startThread {
          let plains = (0..<8).map { _ in Plain() }
          for index in 0..<joins {
            chain.out(plains[index % 8], \.int)
            Bind.unbind(plains[index % 8], \.int)
          }
        }
        for thread in joining + [pruning] {
          #expect(thread.wait(timeout: .now() + 120) == .success)
        }
        #expect(chain.memberCount == 1)
        chain.unbind()
        withExtendedLifetime(head) {}
      }
    }
    #expect(registry.activeChainCount == 0)
  }
}
