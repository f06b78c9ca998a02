import ChainBind
import Dispatch
import Synchronization
import Testing

// Docs/Semantics.md, "Async values": `chain.values` yields the current value, then each accepted
// value (the latest, when the consumer is slow), and ends when the chain does.

/// A model whose values cross to a consuming task.
private final class Feed: @unchecked Sendable {
  @Bound var count = 0
}

@Suite struct ValuesTests {
  @Test func yieldsTheCurrentValueFirst() async {
    let feed = Feed()
    feed.count = 5
    let chain = Bind.inout(feed, \.count)
    var iterator = chain.values.makeAsyncIterator()
    #expect(await iterator.next() == 5)
    chain.unbind()
  }

  @Test func yieldsAcceptedValuesAndNotRejectedOnes() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count).filter { $0 >= 0 }
    var iterator = chain.values.makeAsyncIterator()
    #expect(await iterator.next() == 0)
    feed.count = -1  // rejected
    feed.count = 1
    #expect(await iterator.next() == 1)
    feed.count = 2
    #expect(await iterator.next() == 2)
    chain.unbind()
  }

  @Test func aSlowConsumerGetsTheLatestValue() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    var iterator = chain.values.makeAsyncIterator()
    #expect(await iterator.next() == 0)
    for value in 1...100 { feed.count = value }
    #expect(await iterator.next() == 100)
    feed.count = 101
    #expect(await iterator.next() == 101)
    chain.unbind()
  }

  // A consumer that waits for values while a thread sets the chain as fast as it can: the
  // subscription's state crosses threads, which ThreadSanitizer checks (.ci/run).
  @Test func aConsumerWaitsWhileAnotherThreadSets() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    let last = 5_000
    let consumer = Task { () -> Int in
      var seen = -1
      for await value in chain.values {
        seen = value
        if value == last { break }
        await Task.yield()
      }
      return seen
    }
    let producing = startThread {
      for value in 1...last { feed.count = value }
    }
    #expect(producing.wait(timeout: .now() + 60) == .success)
    #expect(await consumer.value == last)
    chain.unbind()
  }

  @Test func endsWhenTheChainIsUnbound() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    var iterator = chain.values.makeAsyncIterator()
    #expect(await iterator.next() == 0)
    chain.unbind()
    #expect(await iterator.next() == nil)
    #expect(await iterator.next() == nil)
  }

  @Test func endsWhenTheSenderIsDeallocated() async {
    let label = Display()
    var chain: Chain<Int>?
    var iterator: ChainValues<Int>.Iterator?
    do {
      let feed = Feed()
      chain = Bind.inout(feed, \.count).out(label, \.number)
      iterator = chain?.values.makeAsyncIterator()
      #expect(await iterator?.next() == 0)
    }
    #expect(chain?.isActive == false)
    #expect(await iterator?.next() == nil)
  }

  @Test func aWaitingConsumerEndsWhenTheChainEnds() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    let values = chain.values
    await confirmation { ended in
      let consumer = Task {
        var seen: [Int] = []
        for await value in values { seen.append(value) }
        return seen
      }
      // The consumer is subscribed once the chain counts its sink.
      while chain.sinkCount == 0 { await Task.yield() }
      chain.unbind()
      let seen = await consumer.value
      #expect(seen.first == 0)
      ended()
    }
  }

  @Test func anInactiveChainEndsAtOnce() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    chain.unbind()
    var iterator = chain.values.makeAsyncIterator()
    #expect(await iterator.next() == nil)
    #expect(chain.sinkCount == 0)
  }

  @Test func eachIteratorIsASubscriptionCountedBySinkCount() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count).out(key: "log") { _ in }
    #expect(chain.sinkCount == 1)
    do {
      var first = chain.values.makeAsyncIterator()
      var second = chain.values.makeAsyncIterator()
      #expect(chain.sinkCount == 3)
      #expect(await first.next() == 0)
      feed.count = 1
      #expect(await first.next() == 1)
      #expect(await second.next() == 1)  // the latest: 0 was replaced before it was taken
    }
    #expect(chain.sinkCount == 1)  // dropped iterators removed their subscriptions
    chain.unbind()
  }

  @Test func cancellingTheConsumerRemovesItsSubscriptionAtOnce() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    let values = chain.values
    let started = AsyncStream<Void>.makeStream()
    let consumer = Task {
      var count = 0
      for await _ in values {
        count += 1
        started.continuation.yield()
      }
      return count
    }
    for await _ in started.stream { break }
    #expect(chain.sinkCount == 1)
    consumer.cancel()
    let count = await consumer.value
    #expect(count == 1)
    #expect(chain.sinkCount == 0)
    #expect(chain.isActive)
    chain.unbind()
  }

  @Test func anIteratorUsedAfterItsTaskIsCancelledReturnsNil() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    let values = chain.values
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      var iterator = values.makeAsyncIterator()
      return await iterator.next()
    }
    #expect(await task.value == nil)
    #expect(chain.sinkCount == 0)
    chain.unbind()
  }

  @Test func aSubscriptionKeepsNoMemberObjectAlive() async {
    weak var weakFeed: Feed?
    var iterator: ChainValues<Int>.Iterator?
    do {
      let feed = Feed()
      weakFeed = feed
      iterator = Bind.inout(feed, \.count).values.makeAsyncIterator()
      #expect(await iterator?.next() == 0)
    }
    #expect(weakFeed == nil)
    #expect(await iterator?.next() == nil)
  }

  @Test @MainActor func makingAnIteratorNeverIsolatesTheChain() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)  // isolated to the main actor
    let label = Display()
    let errors = LockedBox<[BindingError]>([])
    chain.onError { error in errors.withLock { $0.append(error) } }
    let iterated = await ValuesWorker().firstValue(of: chain)
    #expect(iterated == 0)
    chain.out(label, \.number)
    #expect(errors.withLock { $0.isEmpty })
    chain.unbind()
  }

  @Test func iterationSeesTheChainsFinalValue() async {
    let feed = Feed()
    let chain = Bind.inout(feed, \.count)
    let values = chain.values
    let consumer = Task {
      var last = -1
      for await value in values {
        last = value
        if value == 1_000 { break }
      }
      return last
    }
    while chain.sinkCount == 0 { await Task.yield() }
    for value in 1...1_000 { feed.count = value }
    #expect(await consumer.value == 1_000)
    chain.unbind()
  }
}

private actor ValuesWorker {
  func firstValue(of chain: Chain<Int>) async -> Int? {
    var iterator = chain.values.makeAsyncIterator()
    return await iterator.next()
  }
}
