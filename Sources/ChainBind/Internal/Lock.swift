import Synchronization

// The locks that guard ChainBind's state. No user code (setter, conversion, filter, sink, a
// deinit it may trigger) ever runs while one is held: work is decided under the lock and done
// after it (Docs/Architecture.md, "Locks").

// State that lives inside its lock: the registry's tables, a control's subscriptions, the
// fallback error handler. Their holds include hash-table work, so waiting threads sleep.
//
// Never a closure, nor an optional or tuple of one: `withLock` passes the state `inout` through a
// generic parameter, and Swift rewraps a function-typed state in two thunks at every call. Keep a
// closure in a final class box (Docs/Architecture.md, "Locks"; `.ci/check-locks`).
//
// @unchecked Sendable: `state` is touched only inside `withLock`.
final class Locked<State>: @unchecked Sendable {
  private let mutex = PlatformMutex()
  // Only touched with the mutex held, which already makes the access exclusive.
  @exclusivity(unchecked) private var state: State

  init(_ state: State) {
    self.state = state
  }

  // `body` must not run user code, nor release anything whose deinit might: hand such things
  // out as the result and let them go after unlocking.
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    mutex.lock()
    defer { mutex.unlock() }
    return try body(&state)
  }

  // As `withLock`, when no other thread holds the lock; nil, without running `body`, when one
  // does.
  func withLockIfAvailable<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
    guard mutex.tryLock() else { return nil }
    defer { mutex.unlock() }
    return try body(&state)
  }
}

// State that lives inside a `SpinLock`: for holds of a few loads and stores (a tracked member's
// dependencies, Tracking.swift), taken on every change, where a mutex costs about 60
// instructions more. The rules of `Locked` apply.
//
// @unchecked Sendable: `state` is touched only inside `withLock`.
final class SpinLocked<State>: @unchecked Sendable {
  private let spinLock = SpinLock()
  // Only touched with the lock held, which already makes the access exclusive.
  @exclusivity(unchecked) private var state: State

  init(_ state: State) {
    self.state = state
  }

  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    spinLock.lock()
    defer { spinLock.unlock() }
    return try body(&state)
  }
}

// One atomic flag stored inline: taken with a compare-and-exchange that acquires, released with a
// store that releases (ThreadSanitizer sees both); a waiting thread spins on reads briefly, then
// yields its processor. For holds of a few loads and stores that never run user code; not for
// threads with real-time scheduling policies, which `sched_yield` does not make room for.
// Inlinable: a `@Bound` setter takes its token's lock in the caller's module.
@usableFromInline
struct SpinLock: ~Copyable, @unchecked Sendable {
  @usableFromInline let isLocked = Atomic<Bool>(false)

  @inlinable
  init() {}

  @inlinable
  borrowing func lock() {
    if !tryLock() { lockContended() }
  }

  @inlinable
  borrowing func unlock() { isLocked.store(false, ordering: .releasing) }

  // Takes the lock if it is free; returns whether it did.
  @inlinable
  borrowing func tryLock() -> Bool {
    isLocked.compareExchange(
      expected: false, desired: true, successOrdering: .acquiring, failureOrdering: .relaxed
    ).exchanged
  }

  @usableFromInline
  @inline(never)
  borrowing func lockContended() {
    var spins = 0
    repeat {
      // Wait until the lock looks free (reads only, no cache-line ping-pong), then try again.
      while isLocked.load(ordering: .relaxed) {
        spins += 1
        if spins >= 64 { yieldProcessor() }
      }
    } while !tryLock()
  }
}

// The lock of one chain. Its holds copy a few fields and never run user code.
//
// On Apple platforms, a mutex (the scheduler's priority inheritance needs one there). Elsewhere,
// a `SpinLock`. Measured against a pthread mutex: 112 instructions less per set and one
// allocation (48 bytes) less per chain (Docs/Performance.md).
//
// Taken and released only through `AnyChain.acquire()` and `release(_:)`, whose `Held` proves
// it is held and is the only way to what it guards.
@usableFromInline
struct ChainLock: ~Copyable, @unchecked Sendable {
  #if canImport(Darwin)
    @usableFromInline let mutex = PlatformMutex()
  #else
    @usableFromInline let mutex = SpinLock()
  #endif

  init() {}

  @inlinable borrowing func lock() { mutex.lock() }
  @inlinable borrowing func unlock() { mutex.unlock() }
  borrowing func tryLock() -> Bool { mutex.tryLock() }
}

// The locks under which a `@Bound` storage's token is read and installed by reads ChainBind
// probes (the getter, BoundToken.swift), one of 64 by object: two threads that read a new object
// at once (two chains' re-reads) would otherwise both write its token field. Taken only while a
// thread probes, never with another ChainBind lock held, and no user code runs under one.
//
// The 64 locks are made once and never freed, in one allocation: taking one is a load of its
// address and the lock's compare-and-exchange (no reference count, no array bounds).
//
// @unchecked Sendable: `lock` points at one of the 64, which are never freed; they are atomic.
@usableFromInline
struct TokenStripe: @unchecked Sendable {
  private let lock: UnsafeMutablePointer<SpinLock>

  private init(_ lock: UnsafeMutablePointer<SpinLock>) { self.lock = lock }

  // The first of the 64.
  private static let first: TokenStripe = {
    let locks = UnsafeMutablePointer<SpinLock>.allocate(capacity: 64)
    for index in 0..<64 { (locks + index).initialize(to: SpinLock()) }
    return TokenStripe(locks)
  }()

  // Locks the stripe of `object`, and returns it for `unlock()`.
  @usableFromInline
  @inline(never)
  static func lock(for object: AnyObject) -> TokenStripe {
    // Objects are at least 16-byte aligned: the bits above them spread objects over stripes.
    let index = Int((UInt(bitPattern: ObjectIdentifier(object)) >> 4) & 63)
    let stripe = TokenStripe(first.lock + index)
    stripe.lock.pointee.lock()
    return stripe
  }

  @usableFromInline
  @inline(never)
  func unlock() { lock.pointee.unlock() }
}
