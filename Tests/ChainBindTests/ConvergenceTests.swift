@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Synchronization
import Testing

// Docs/Semantics.md, "Threading" and "Re-entrancy": one delivery at a time per chain, with no
// thread waiting for another, and every member at the chain's latest value once things settle.
// Each test holds one thread inside user code (a getter, a setter, a sink) at the race point
// with semaphores while another thread acts, then checks the outcome.

/// A model whose computed `sum` reads two `@Bound` properties, with a hook inside its getter.
private final class Sums: @unchecked Sendable {
  @Bound var a = 0
  @Bound var b = 0
  let hook = Hook<Int>()
  var sum: Int {
    let value = a + b
    hook(value)
    return value
  }
}

/// A receiver whose writes are counted.
private final class Gauge: @unchecked Sendable {
  var value = -1
}

private final class Inner: @unchecked Sendable {
  let hook = Hook<String>()
  @Bound var text: String {
    willSet { hook(newValue) }
  }
  init(_ text: String) { self.text = text }
}

private final class Outer: @unchecked Sendable {
  @Bound var inner = Inner("first")
}

private final class Source: @unchecked Sendable {
  @Bound var text = ""
}

private final class Reading: @unchecked Sendable {
  @Bound var number = 0
}

private final class Field: @unchecked Sendable {
  var text = ""
}

/// Calls of a sink: the values in order, and whether two calls ever overlapped.
private final class SinkCalls: Sendable {
  private let state = LockedBox<(values: [Int], inside: Int, overlapped: Bool)>(([], 0, false))
  func enter(_ value: Int) {
    state.withLock {
      $0.values.append(value)
      $0.inside += 1
      if $0.inside > 1 { $0.overlapped = true }
    }
  }
  func leave() { state.withLock { $0.inside -= 1 } }
  var values: [Int] { state.withLock { $0.values } }
  var overlapped: Bool { state.withLock { $0.overlapped } }
}

@Suite("Convergence: every member ends at the chain's latest value", .serialized)
struct ConvergenceTests {
  @Test("another thread's change made while a conversion runs waits for the value it converts")
  func changeWhileAConversionRunsWaitsForIt() {
    let head = Source()
    let converted = Reading()
    let gauge = Gauge()
    let calls = SinkCalls()
    let hook = Hook<Int>()
    let chain = Bind.in(head, \.text).out(gauge, \.value, convert: { Int($0) ?? -2 })
      .in(
        converted, \.number,
        back: { (number: Int) -> String? in
          hook(number)
          return String(number)
        }
      )
      .out(key: "log") { (text: String) in
        calls.enter(Int(text) ?? -2)
        calls.leave()
      }
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    // Held in the conversion of the other thread's change, 5.
    hook.set { number in
      guard number == 5 else { return }
      entered.signal()
      proceed.wait()
    }
    let done = startThread { converted.number = 5 }
    entered.wait()
    head.text = "8"  // returns while the other thread is held: its change waits
    let seenWhileHeld = calls.values
    proceed.signal()
    done.wait()
    hook.set(nil)
    #expect(waitUntilIdle(chain))
    #expect(seenWhileHeld == [-2])
    #expect(calls.values == [-2, 5, 8])
    #expect(!calls.overlapped)
    #expect(gauge.value == 8)
    #expect(chain.currentValue == "8")
    chain.unbind()
  }

  @Test("a tracked member's re-reads on two threads deliver the latest value last")
  func concurrentRereadsDeliverTheLatestLast() {
    let sums = Sums()
    let gauge = Gauge()
    let chain = Bind.in(sums, \.sum).out(gauge, \.value)
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    // Held in the getter: the other thread's re-read, once it has read 1.
    sums.hook.set { value in
      guard value == 1 else { return }
      entered.signal()
      proceed.wait()
    }
    let done = startThread { sums.a = 1 }
    entered.wait()  // the other thread has read 1 and not delivered it yet
    sums.b = 10  // this thread never waits for it: the re-read is queued for it
    proceed.signal()
    done.wait()
    sums.hook.set(nil)
    // The other thread's call delivered its own change; this one's waited for a relay.
    #expect(waitUntilIdle(chain))
    #expect(sums.sum == 11)
    #expect(gauge.value == 11)
    #expect(chain.currentValue == 11)
    chain.unbind()
  }

  @Test("re-reads waiting for the same member merge into one, which reads the latest")
  func waitingRereadsMerge() {
    let sums = Sums()
    let gauge = Gauge()
    let chain = Bind.in(sums, \.sum).out(gauge, \.value)
    let reads = LockedBox(0)
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    sums.hook.set { value in
      reads.withLock { $0 += 1 }
      guard value == 1 else { return }
      entered.signal()
      proceed.wait()
    }
    let delivering = startThread { sums.a = 1 }
    entered.wait()  // the other thread is inside its re-read
    for b in 10...14 { sums.b = b }  // five changes while it reads: one re-read waits for them
    proceed.signal()
    delivering.wait()
    #expect(waitUntilIdle(chain))  // the re-read waiting was left to a relay
    sums.hook.set(nil)
    #expect(reads.withLock { $0 } == 2)
    #expect(gauge.value == 15)
    #expect(chain.currentValue == 15)
    chain.unbind()
  }

  @Test(
    "a dependency changed while the member is being bound is delivered",
    arguments: 1...4)
  func dependencyChangedWhileBinding(heldRead: Int) {
    let sums = Sums()
    // Bound once before: the properties have their tokens (installing one is not raced here).
    Bind.in(sums, \.sum).unbind()
    let gauge = Gauge()
    let reads = LockedBox(0)
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let isBinding = LockedBox(true)
    sums.hook.set { _ in
      let read = reads.withLock {
        $0 += 1
        return $0
      }
      guard read == heldRead, isBinding.withLock({ $0 }) else { return }
      entered.signal()
      proceed.wait()
    }
    let binding = LockedBox<Chain<Int>?>(nil)
    let done = startThread { binding.withLock { $0 = Bind.in(sums, \.sum).out(gauge, \.value) } }
    // Binding reads `sum` a few times; with fewer reads than `heldRead`, nothing is held.
    let held = DispatchSemaphore(value: 0)
    let setter = startThread {
      entered.wait()
      sums.a = 5  // while the binding thread is inside read number `heldRead`
      proceed.signal()
      held.signal()
    }
    done.wait()
    isBinding.withLock { $0 = false }
    if reads.withLock({ $0 }) < heldRead {
      entered.signal()
      setter.wait()
      return
    }
    held.wait()
    setter.wait()
    // The change was left to a relay by the binding call.
    if let chain = binding.withLock({ $0 }) { #expect(waitUntilIdle(chain)) }
    sums.hook.set(nil)
    #expect(sums.sum == 5)
    #expect(gauge.value == 5)
    binding.withLock { $0?.unbind() }
  }

  @Test("another thread's change of a nested link is not taken for the chain's own write")
  func anotherThreadsChangeIsNotAnEcho() {
    let outer = Outer()
    let source = Source()
    let chain = Bind.inout(source, \.text).inout(outer, \.inner.text)
    #expect(outer.inner.text == "")
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let first = outer.inner
    // Held as the chain writes "typed" into the nested path, before the store.
    first.hook.set { newValue in
      guard newValue == "typed" else { return }
      entered.signal()
      proceed.wait()
    }
    let delivering = startThread { source.text = "typed" }
    entered.wait()
    outer.inner = Inner("replaced")  // this thread replaces the link meanwhile
    proceed.signal()
    delivering.wait()
    #expect(waitUntilIdle(chain))  // the replacement's re-read was left to a relay
    first.hook.set(nil)
    // The chain ends at what the path reads now: the new link's value, everywhere.
    #expect(outer.inner.text == "replaced")
    #expect(chain.currentValue == "replaced")
    #expect(source.text == "replaced")
    chain.unbind()
  }

  @Test("a sink added while another thread delivers gets its first call first, then each change")
  func sinkAddedDuringAnotherThreadsDelivery() {
    let source = Counter()
    let chain = Bind.in(source, \.n)
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    chain.out(key: "hold") { value in
      guard value == 1 else { return }
      entered.signal()
      proceed.wait()
    }
    let delivering = startThread { source.n = 1 }
    entered.wait()  // the other thread delivers 1, inside a sink
    let calls = SinkCalls()
    let adderInside = DispatchSemaphore(value: 0)
    let adderProceed = DispatchSemaphore(value: 0)
    let adderThread = LockedBox<Thread?>(nil)
    // A third thread adds the sink; a call of it on that thread (its first call, made in place)
    // is held there, so that the change below would reach the sink while it runs.
    let adding = startThread {
      adderThread.withLock { $0 = Thread.current }
      chain.out(key: "late") { value in
        calls.enter(value)
        if adderThread.withLock({ $0 }) == Thread.current {
          adderInside.signal()
          adderProceed.wait()
        }
        calls.leave()
      }
      adderInside.signal()  // added without a call on this thread
    }
    adderInside.wait()
    proceed.signal()
    delivering.wait()
    source.n = 2
    adderProceed.signal()
    adding.wait()
    #expect(waitUntilIdle(chain))  // the first call was left to a relay
    adderThread.withLock { $0 = nil }  // the thread's block refers to the box: no cycle left
    #expect(!calls.overlapped)
    #expect(calls.values == [1, 2])
    chain.unbind()
  }

  @Test("a list sink added while another thread delivers gets changes that chain")
  func listSinkAddedDuringAnotherThreadsDelivery() {
    let feed = Feed()
    let chain = Bind.in(feed, \.items)
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    chain.out(key: "hold") { items in
      guard items == [1] else { return }
      entered.signal()
      proceed.wait()
    }
    let delivering = startThread { feed.items = [1] }
    entered.wait()
    let changes = LockedBox<[ListChange<Int>]>([])
    chain.outChanges(key: "rows") { change in changes.withLock { $0.append(change) } }
    proceed.signal()
    delivering.wait()
    feed.items = [1, 2]
    feed.items = [2]
    #expect(waitUntilIdle(chain))  // the first call was left to a relay
    let seen = changes.withLock { $0 }
    #expect(seen.first?.isInitial == true)
    for (previous, next) in zip(seen, seen.dropFirst()) {
      #expect(next.old == previous.new)
    }
    #expect(seen.last?.new == [2])
    chain.unbind()
  }

  @Test("a feedback loop is reported after 10 000 changes, and the chain stays usable")
  func feedbackLoopIsReported() {
    let text = Source()
    let gauge = Field()
    let log = ErrorLog()
    let calls = LockedBox(0)
    let chain = Bind.inout(text, \.text).onError(log.handler).out(gauge, \.text)
      .out(key: "normalize") { value in
        calls.withLock { $0 += 1 }
        text.text = value.uppercased()  // sets its source unconditionally: every set is a change
      }
    #expect(log.errors.map(\.cause) == [.feedbackLoop])
    #expect(log.errors.first?.member == "Source.text")
    #expect(calls.withLock { $0 } == 10_001)
    chain.removeOut(key: "normalize")
    text.text = "ok"
    #expect(gauge.text == "ok")
    #expect(chain.isActive)
    chain.unbind()
  }

  // A feedback loop drops the changes queued, not the work queued with them: a tracked member's
  // re-read and a new member's first value, queued by another thread while the loop ran. Until
  // 0.4's fix both were dropped: the member's later re-reads, made while another thread
  // delivered, merged into the dropped one and were lost, and the new member, still waiting for
  // its first value, was skipped by every later delivery.
  @Test("a feedback loop drops the changes queued, not a re-read or a new member's first value")
  func feedbackLoopKeepsQueuedWork() {
    let counter = Counter()
    let job = Job()
    let errors = LockedBox<[BindingError.Cause]>([])
    let held = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let chain = Bind.inout(counter, \.n)
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .in(job, \.link.y)
      .out(key: "loop") { value in
        // Below zero, a runaway loop: the change this queues at -10 001 is the one reported.
        if value < 0 { counter.n = value - 1 }
        // Stops there, and at 100, while the test acts.
        if value == -10_001 || value == 100 {
          held.signal()
          proceed.wait()
        }
      }
    let looping = startThread { counter.n = -1 }
    #expect(held.wait(timeout: .now() + 30) == .success)
    job.link.y = 5  // a re-read queued behind the loop's last change
    let gauge = Gauge()
    chain.out(gauge, \.value)  // written at once, and its first value queued
    proceed.signal()
    #expect(looping.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    #expect(chain.currentValue == 5)
    #expect(gauge.value == 5)
    let holding = startThread { counter.n = 100 }
    #expect(held.wait(timeout: .now() + 30) == .success)
    job.link.y = 7  // a re-read queued for the holding thread
    proceed.signal()
    #expect(holding.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 7)
    #expect(counter.n == 7)
    #expect(gauge.value == 7)
    chain.unbind()
  }

  // A dropped change was stored in its member already: the member gets the chain's value back,
  // so that every member ends at the chain's value (before, it kept the dropped one).
  @Test("after a feedback loop, the member whose change was dropped shows the chain's value")
  func feedbackLoopRestoresTheLoopingMember() {
    let counter = Counter()
    let other = Counter()
    let errors = LockedBox<[BindingError.Cause]>([])
    let chain = Bind.inout(counter, \.n)
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .inout(other, \.n)
      .out(key: "loop") { value in if value < 0 { counter.n = value - 1 } }
    counter.n = -1
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    #expect(chain.currentValue == -10_001)
    #expect(counter.n == -10_001)
    #expect(other.n == -10_001)
    chain.unbind()
  }

  // The changes a report drops are the loop's own: another thread's change, made while the loop
  // ran, is delivered after the report, and every member ends at it (before, it was dropped with
  // the loop's, and the chain kept the loop's last value while that member held another).
  @Test("a feedback loop drops its own changes, not another thread's made meanwhile")
  func feedbackLoopKeepsOtherThreadsChanges() {
    let counter = Counter()
    let other = Counter()
    let errors = LockedBox<[BindingError.Cause]>([])
    let held = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let chain = Bind.inout(counter, \.n)
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .inout(other, \.n)
      .out(key: "loop") { value in
        // Below zero, a runaway loop: the change this queues at -10 001 is the one reported.
        if value < 0 { counter.n = value - 1 }
        if value == -10_001 {
          held.signal()
          proceed.wait()
        }
      }
    let looping = startThread { counter.n = -1 }
    #expect(held.wait(timeout: .now() + 30) == .success)
    other.n = 42  // queued behind the loop's last change; this thread does not wait
    proceed.signal()
    #expect(looping.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    #expect(chain.currentValue == 42)
    #expect(counter.n == 42)
    #expect(other.n == 42)
    chain.unbind()
  }

  // A loop counts the changes each made while the one before it was delivered, also when the
  // delivery passed to another thread meanwhile: here another thread's change every 5 000 turns
  // sends the loop on to a relay. Counted per call, as before, the loop went on unreported until
  // those changes stopped, 30 000 turns in, and was reported 10 000 turns after.
  @Test("a feedback loop is reported after 10 000 changes, while the delivery passes to a relay")
  func feedbackLoopIsCountedAcrossRelays() {
    let counter = Counter()
    let other = Counter()
    let errors = LockedBox<[BindingError.Cause]>([])
    let calls = LockedBox(0)
    let chain = Bind.inout(counter, \.n)
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .inout(other, \.n)
      .out(key: "loop") { value in
        calls.withLock { $0 += 1 }
        guard value < 0 else { return }
        counter.n = value - 1
        // Queued behind the loop's change: the delivery leaves both to a relay.
        if value > -30_000 && value % 5_000 == 0 { startThread { other.n = 42 }.wait() }
      }
    calls.withLock { $0 = 0 }
    let looping = startThread { counter.n = -1 }
    #expect(looping.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    // -1 … -10 001, and the two changes of `other` made meanwhile.
    #expect(calls.withLock { $0 } == 10_003)
    #expect(chain.currentValue == 42)
    #expect(counter.n == 42)
    chain.unbind()
  }

  // A loop whose turns each make two changes grows wide, not deep: 2^n turns before a change
  // n deep. It is reported by the count of the changes one call delivered that the delivery
  // made itself, as a deep one is by its depth.
  @Test("a feedback loop that makes two changes a turn is reported")
  func wideFeedbackLoopIsReported() {
    let first = Counter()
    let second = Counter()
    let errors = LockedBox<[BindingError.Cause]>([])
    let chain = Bind.inout(first, \.n)
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .inout(second, \.n)
      .out(key: "loop") { value in
        guard value < 0 else { return }
        first.n = value - 1
        second.n = value - 2
      }
    let looping = startThread { first.n = -1 }
    #expect(looping.wait(timeout: .now() + 60) == .success)
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    #expect(first.n == chain.currentValue)
    #expect(second.n == chain.currentValue)
    chain.unbind()
  }

  // After a report, the count of the delivery's own changes starts again: a change that the kept
  // work leads to is not one more change of the loop. That shows only where work kept behind
  // the loop runs in the same delivery: a relay's, with its share left, since the loop's first
  // change came from the call that handed it over.
  @Test("after a feedback loop is reported, what the kept work leads to is counted anew")
  func feedbackCountStartsAgainAfterAReport() {
    let counter = Counter()
    let job = Job()
    let errors = LockedBox<[BindingError.Cause]>([])
    let held = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let chain = Bind.inout(counter, \.n)
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .in(job, \.link.y)
      .out(key: "loop") { value in
        if value == 1 {
          held.signal()
          proceed.wait()
          counter.n = -1  // queued behind the test's change: the relay takes both
        }
        if value < 0 { counter.n = value - 1 }  // a runaway loop: -10 001 is reported
        if value == -10_000 {
          held.signal()
          proceed.wait()
        }
        if value == 5 { counter.n = 6 }  // the re-read's value leads to one change more
      }
    let delivering = startThread { counter.n = 1 }
    #expect(held.wait(timeout: .now() + 30) == .success)
    counter.n = 1_000  // another thread's change: the delivering call leaves it to a relay
    proceed.signal()
    #expect(delivering.wait(timeout: .now() + 30) == .success)
    #expect(held.wait(timeout: .now() + 30) == .success)  // the relay, at the loop's end
    job.link.y = 5  // a re-read queued behind the loop's last change
    proceed.signal()
    #expect(waitUntilIdle(chain))
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    #expect(chain.currentValue == 6)
    #expect(counter.n == 6)
    chain.unbind()
  }
}

@Suite("Convergence: in a main-actor chain", .serialized)
struct IsolatedConvergenceTests {
  // In a chain isolated to the main actor, a loop started by another thread's change, handed
  // to the actor, is counted there as anywhere: reported once, and the looping member gets the
  // chain's value back.
  // A delivery handed to the actor gives its changes their own depths: the depth of the last
  // change the thread delivered before the hand-off is not the next delivery's. Here a thread's
  // loop stops 9 989 deep, held there while this thread queues a change and isolates the chain
  // (a sink added on the main actor): the thread hands the queue to the actor. A later chain of
  // 20 changes on the actor is no loop (before, it started 9 989 deep and was reported).
  @Test("a delivery handed to the actor does not pass the depth of its last change on")
  func handedDeliveryStartsItsOwnCount() async {
    let counter = Counter()
    let other = Counter()
    let errors = LockedBox<[BindingError.Cause]>([])
    let held = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let chain = Bind.inout(counter, \.n)  // nonisolated: this function is
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .inout(other, \.n)
      .out(key: "steps") { value in
        if value < 0 && value > -9_990 { counter.n = value - 1 }
        if value == -9_990 {
          held.signal()
          proceed.wait()
        }
        if (1...20).contains(value) { counter.n = value + 1 }
      }
    let looping = startThread { counter.n = -1 }
    #expect(held.wait(timeout: .now() + 30) == .success)
    other.n = 500  // queued: the looping thread delivers
    await MainActor.run { _ = chain.out(key: "isolates") { _ in } }
    proceed.signal()
    #expect(looping.wait(timeout: .now() + 30) == .success)
    #expect(await waitUntilIdle(chain, isolation: MainActor.shared))
    await MainActor.run { counter.n = 1 }
    #expect(errors.withLock { $0 } == [])
    #expect(counter.n == 21)
    #expect(chain.currentValue == 21)
    chain.unbind()
  }

  @Test("a feedback loop in a main-actor chain, started from another thread, is reported")
  @MainActor
  func feedbackLoopOnTheMainActor() async {
    let counter = Counter()
    let errors = LockedBox<[BindingError.Cause]>([])
    let chain = Bind.inout(counter, \.n)  // isolated to MainActor
      .onError { error in errors.withLock { $0.append(error.cause) } }
      .out(key: "loop") { value in if value < 0 { counter.n = value - 1 } }
    let looping = startThread { counter.n = -1 }  // queued for the main actor
    #expect(looping.wait(timeout: .now() + 30) == .success)
    #expect(await waitUntilIdle(chain))
    #expect(errors.withLock { $0 } == [.feedbackLoop])
    #expect(chain.currentValue == -10_001)
    #expect(counter.n == -10_001)
    chain.unbind()
  }
  @Test("another thread's change of a nested link, while the actor writes that path, is delivered")
  @MainActor
  func anotherThreadsChangeIsNotAnEchoOnTheActor() async {
    let outer = Outer()
    let source = Source()
    let chain = Bind.inout(source, \.text).inout(outer, \.inner.text)  // isolated to MainActor
    let first = outer.inner
    let replaced = LockedBox(false)
    // Held on the main thread as the chain writes "typed" into the path, while another thread
    // replaces the link.
    first.hook.set { newValue in
      guard newValue == "typed" else { return }
      let replacing = startThread {
        outer.inner = Inner("replaced")
        replaced.withLock { $0 = true }
      }
      replacing.wait()  // its change was queued for the actor: it did not wait for it
    }
    source.text = "typed"
    first.hook.set(nil)
    #expect(replaced.withLock { $0 })
    // The actor runs the re-read queued for it.
    var turns = 0
    while chain.currentValue != "replaced" && turns < 10_000 {
      await Task.yield()
      turns += 1
    }
    #expect(outer.inner.text == "replaced")
    #expect(chain.currentValue == "replaced")
    #expect(source.text == "replaced")
    chain.unbind()
  }
}

@Suite("Convergence: a refused addition changes nothing", .serialized)
struct RefusedAdditionTests {
  @Test("a member refused on the main actor does not isolate the chain")
  @MainActor
  func refusedMemberDoesNotIsolate() {
    let source = Counter()
    let chain = nonisolatedChain(source)
    let log = ErrorLog()
    chain.onErrorNonisolated(log.handler)
    chain.in(Computed(), \.twice)  // not observable, not writable: refused
    #expect(log.errors.map(\.cause) == [.notObservable])
    let seenOnThread = LockedBox(-1)
    let gauge = Gauge()
    nonisolatedOut(chain, gauge)
    startThread {
      source.n = 7
      seenOnThread.withLock { $0 = gauge.value }  // delivered on this thread, synchronously
    }.wait()
    #expect(seenOnThread.withLock { $0 } == 7)
    chain.unbind()
  }
}

private final class Link: @unchecked Sendable {
  @Bound var y = 0
}

private final class Job: @unchecked Sendable {
  @Bound var link = Link()
}

private final class Counter: @unchecked Sendable {
  @Bound var n = 0
}

private final class Feed: @unchecked Sendable {
  @Bound var items: [Int] = []
}

private final class Computed {
  var base = 1
  var twice: Int { base * 2 }
}

private func nonisolatedChain(_ source: Counter) -> Chain<Int> {
  Bind.in(source, \.n)
}

extension Chain {
  fileprivate nonisolated func onErrorNonisolated(_ handler: @escaping (BindingError) -> Void) {
    onError(handler)
  }
}

private nonisolated func nonisolatedOut(_ chain: Chain<Int>, _ gauge: Gauge) {
  chain.out(gauge, \.value)
}
