import Synchronization

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#elseif os(Windows)
  import WinSDK
#endif

// The locks that guard ChainBind's state. Neither is Synchronization.Mutex: on Linux, Mutex parks
// threads with futex calls that ThreadSanitizer does not see, so every access it guards is
// reported as a race, and DESIGN §6.1 asks for TSan-clean runs.
//
// `Lock` is a pthread mutex (TSan intercepts it), allocated once per lock when its owner is
// created: for the registry, whose holds include hash-table work, for controls and for the
// fallback handler. `ChainLock` guards one chain, whose holds are a few loads and stores.
//
// Both: `run { }` for configuration, plain `lock()`/`unlock()` for the delivery path (a generic
// `run` closure returning a generic value makes unspecialized code look up run-time type
// metadata on every call).

// A pthread mutex at a stable heap address, as pthread requires.
//
// @unchecked Sendable: the pointer is only ever used through pthread_mutex_lock/unlock.
struct Lock: ~Copyable, @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  borrowing func lock() { pthread_mutex_lock(mutex) }
  borrowing func unlock() { pthread_mutex_unlock(mutex) }
  // Takes the lock if it is free; returns whether it did.
  borrowing func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

  // Runs `body` with the lock held. `body` must not run user code, nor release anything whose
  // deinit might (hand such things out as the result and let them go after unlocking).
  borrowing func run<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}

// The lock of one chain.
//
// On Apple platforms, a `Lock` (the scheduler's priority inheritance needs a real mutex there).
// Elsewhere, one atomic flag stored inline: taken with a compare-and-exchange that acquires,
// released with a store that releases (TSan sees both). A chain's holds copy a few fields and
// never run user code, so a waiting thread spins briefly and then yields its processor. Inline,
// it costs no allocation per chain, and an uncontended lock and unlock are one atomic instruction
// and one plain store, where a pthread mutex takes two atomic instructions and a call each way.
// Not for threads with real-time scheduling policies, which `sched_yield` does not make room for.
struct ChainLock: ~Copyable, @unchecked Sendable {
  #if canImport(Darwin)
    private let mutex = Lock()

    init() {}

    borrowing func lock() { mutex.lock() }
    borrowing func unlock() { mutex.unlock() }
    borrowing func tryLock() -> Bool { mutex.tryLock() }
  #else
    private let isLocked = Atomic<Bool>(false)

    init() {}

    borrowing func lock() {
      if !isLocked.compareExchange(
        expected: false, desired: true, successOrdering: .acquiring, failureOrdering: .relaxed
      ).exchanged {
        lockContended()
      }
    }

    @inline(never)
    private borrowing func lockContended() {
      var spins = 0
      repeat {
        // Wait until the lock looks free (reads only, no cache-line ping-pong), then try again.
        while isLocked.load(ordering: .relaxed) {
          spins += 1
          if spins >= 64 { yieldProcessor() }
        }
      } while !isLocked.compareExchange(
        expected: false, desired: true, successOrdering: .acquiring, failureOrdering: .relaxed
      ).exchanged
    }

    borrowing func unlock() { isLocked.store(false, ordering: .releasing) }

    // Takes the lock if it is free; returns whether it did.
    borrowing func tryLock() -> Bool {
      isLocked.compareExchange(
        expected: false, desired: true, successOrdering: .acquiring, failureOrdering: .relaxed
      ).exchanged
    }

    private borrowing func yieldProcessor() {
      #if os(Windows)
        _ = SwitchToThread()
      #else
        _ = sched_yield()
      #endif
    }
  #endif

  // Runs `body` with the lock held; the same rules as `Lock.run`.
  borrowing func run<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}
