import Synchronization

extension Mutex where Value == Void {
  // `withLock` for a lock that guards the stored properties of the @unchecked Sendable class
  // that owns it. `withLock` wants a `sending` result, which a value read from such a class is
  // not, to region checking; here the class's own documentation carries that proof.
  borrowing func run<Result>(_ body: () -> Result) -> Result {
    nonisolated(unsafe) var result: Result?
    withLock { _ in result = body() }
    return result.unsafelyUnwrapped
  }
}
