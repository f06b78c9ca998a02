import ChainBind
import Dispatch
import Foundation

/// The operator's remote console: it changes the model from a thread of its own, as a network
/// feed would, never on the main actor.
enum RemoteConsole {
  /// Runs `change` on a new thread and returns once that thread has made it.
  ///
  /// The caller then knows the model holds the new value. A main-actor chain has only queued the
  /// change for the main actor, which delivers it when the caller lets the main actor run.
  static func run(_ change: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      change()
      done.signal()
    }
    thread.name = "remote console"
    thread.start()
    done.wait()
  }
}

/// Waits, on the main actor, until a chain has delivered its next change there.
///
/// It listens with a keyed sink. A chain calls its sinks after writing its members, so when the
/// wait is over, every widget on the chain shows the change. Create it before the change is made.
@MainActor
final class NextDelivery<Value> {
  private let chain: Chain<Value>
  private var isDelivered = false
  private var waiter: CheckedContinuation<Void, Never>?

  /// Starts listening to `chain`.
  init(on chain: Chain<Value>) {
    self.chain = chain
    // Not called now: only the next change counts.
    chain.out(key: key, initial: false) { [weak self] _ in self?.arrive() }
  }

  deinit {
    chain.removeOut(key: key)
  }

  /// Returns once the chain has delivered a change since this was created.
  func wait() async {
    guard !isDelivered else { return }
    await withCheckedContinuation { waiter = $0 }
  }

  // Its own key, so that two waiters on one chain do not replace each other's sink.
  private nonisolated var key: String { "LotteryDemo.NextDelivery \(ObjectIdentifier(self))" }

  private func arrive() {
    isDelivered = true
    waiter?.resume()
    waiter = nil
  }
}
