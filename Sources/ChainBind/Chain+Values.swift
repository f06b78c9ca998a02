import Synchronization

extension Chain where Value: Sendable {
  /// The chain's values as an asynchronous sequence: the current value, then each value the
  /// chain accepts.
  ///
  /// Each iterator is a subscription of its own, counted by ``sinkCount``. A slow consumer gets
  /// the latest value, not a backlog: at most one value waits. Iteration ends (`nil`) when the
  /// chain is no longer active (unbound, or its sending members are gone), and at once for a
  /// chain inactive already. Cancelling the consuming task ends its iteration and removes its
  /// subscription at once. A subscription never keeps a member's object alive, never isolates the
  /// chain and is never refused; the consumer resumes on its own executor.
  ///
  /// ```swift
  /// for await progress in Bind.in(download, \.progress).values {
  ///   bar.show(progress)   // 0.0 (the current value), then 0.5, 1.0, ...
  /// }
  /// ```
  public var values: ChainValues<Value> { ChainValues(core: core) }
}

/// The values of a chain, as ``Chain/values`` gives them: the current value, then each value the
/// chain accepts, latest first when the consumer is slow.
///
/// ```swift
/// let values = Bind.in(download, \.progress).values
/// Task { for await progress in values { bar.show(progress) } }
/// ```
public struct ChainValues<Value: Sendable>: AsyncSequence, Sendable {
  /// The chain's value type.
  public typealias Element = Value
  /// Iteration never throws: it ends with `nil`.
  public typealias Failure = Never

  let core: ChainCore<Value>

  /// Subscribes to the chain: the iterator yields its current value first.
  ///
  /// - Returns: A new subscription's iterator.
  public func makeAsyncIterator() -> Iterator {
    Iterator(subscription: ValuesSubscription(core: core))
  }

  /// One subscription to a chain's values: yields the current value, then the latest value the
  /// chain accepted since the last one it yielded; `nil` once the chain is inactive or the task
  /// is cancelled.
  ///
  /// ```swift
  /// var iterator = chain.values.makeAsyncIterator()
  /// await iterator.next()   // the chain's current value
  /// ```
  public struct Iterator: AsyncIteratorProtocol {
    let subscription: ValuesSubscription<Value>

    /// The next value: waits for one when none is waiting.
    ///
    /// - Parameter actor: The caller's actor, passed by Swift; leave it out.
    /// - Returns: The value, or `nil` when iteration ended.
    public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Value? {
      await subscription.next(isolation: actor)
    }

    /// The next value: waits for one when none is waiting.
    ///
    /// - Returns: The value, or `nil` when iteration ended.
    public mutating func next() async -> Value? {
      await subscription.next(isolation: nil)
    }
  }
}

// A `values` iterator's subscription: a keyed sink under a key of its own, whose latest value
// waits here for the consumer. Decided under the lock, resumed after it.
final class ValuesSubscription<Value: Sendable>: Sendable {
  private struct State {
    // The value waiting for the consumer (at most one: the latest).
    var waiting: Value?
    var hasWaiting = false
    var consumer: CheckedContinuation<Value?, Never>?
    var isFinished = false
  }

  // A pthread mutex (`Locked`), which ThreadSanitizer sees: it did not see `Mutex` wake a
  // waiting thread, and reported the consumer's and the producer's accesses as a race.
  private let state = Locked(State())
  private let core: ChainCore<Value>
  private let key: String

  init(core: ChainCore<Value>) {
    self.core = core
    let number = valuesSubscriptionNumbers.add(1, ordering: .relaxed).newValue
    key = Sink<Value>.valuesKeyPrefix + "\(number)"
    // The sink holds the subscription weakly, and a notice whose deinit ends iteration: the
    // chain releases its sinks when it ends, and `removeSink` when the consumer goes.
    let ended = ValuesEnd(self)
    let sink = Sink<Value>(key: key) { [weak self] value in
      withExtendedLifetime(ended) { self?.receive(value) }
    }
    // Not an addition in the sense of isolation: never refused, never isolates the chain.
    _ = core.addSink(sink, initial: true)
  }

  deinit {
    _ = core.removeSink(key: key)
  }

  func receive(_ value: Value) {
    let consumer = state.withLock { state -> CheckedContinuation<Value?, Never>? in
      guard !state.isFinished else { return nil }
      if let consumer = state.consumer {
        state.consumer = nil
        return consumer
      }
      state.waiting = value
      state.hasWaiting = true
      return nil
    }
    consumer?.resume(returning: value)
  }

  // The chain ended, or the consumer's task was cancelled: a waiting consumer gets `nil`.
  func finish() {
    let consumer = state.withLock { state -> CheckedContinuation<Value?, Never>? in
      state.isFinished = true
      defer { state.consumer = nil }
      return state.consumer
    }
    consumer?.resume(returning: nil)
  }

  func next(isolation actor: isolated (any Actor)?) async -> Value? {
    if Task.isCancelled { return cancel() }
    return await withTaskCancellationHandler {
      await withCheckedContinuation(isolation: actor) { consumer in
        let ready = state.withLock { state -> Value?? in
          if state.hasWaiting {
            state.hasWaiting = false
            defer { state.waiting = nil }
            return .some(state.waiting)
          }
          if state.isFinished { return .some(nil) }
          state.consumer = consumer
          return .none
        }
        if let ready { consumer.resume(returning: ready) }
      }
    } onCancel: {
      _ = cancel()
    }
  }

  // Ends iteration and removes the subscription now: `sinkCount` drops at once.
  private func cancel() -> Value? {
    finish()
    let removed = core.removeSink(key: key)
    withExtendedLifetime(removed) {}
    return nil
  }
}

private let valuesSubscriptionNumbers = Atomic<UInt64>(0)

// Ends its subscription's iteration when the chain releases the sink that holds it.
private final class ValuesEnd<Value: Sendable>: Sendable {
  private weak let subscription: ValuesSubscription<Value>?

  init(_ subscription: ValuesSubscription<Value>) { self.subscription = subscription }

  deinit { subscription?.finish() }
}
