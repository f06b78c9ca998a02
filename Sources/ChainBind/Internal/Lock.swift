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

// The lock that guards the state of a chain, of the registry and of a control's events.
//
// Not Synchronization.Mutex: on Linux, Mutex parks threads with futex calls that
// ThreadSanitizer does not see, so every access it guards is reported as a race, and DESIGN §6.1
// asks for TSan-clean runs.
//
// On Apple platforms it is a pthread mutex (TSan intercepts it; the scheduler's priority
// inheritance needs a real mutex there), allocated once per lock when its owner is created.
//
// Elsewhere it is one atomic flag stored inline: taken with a compare-and-exchange that
// acquires, released with a store that releases (TSan sees both). Every hold in ChainBind is a
// few loads and stores, never user code, so a waiting thread spins briefly and then yields its
// processor. Inline, it costs no allocation per chain, and an uncontended lock and unlock are one
// atomic instruction and one plain store, where a pthread mutex takes two atomic instructions
// and a call each way.
struct Lock: ~Copyable, @unchecked Sendable {
  #if canImport(Darwin)
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

    private borrowing func yieldProcessor() {
      #if os(Windows)
        _ = SwitchToThread()
      #else
        _ = sched_yield()
      #endif
    }
  #endif

  // Plain lock and unlock above are for the delivery path: a generic `run` closure returning a
  // generic value makes unspecialized code look up run-time type metadata on every call.

  // Runs `body` with the lock held. `body` must not run user code, nor release anything whose
  // deinit might (hand such things out as the result and let them go after unlocking).
  borrowing func run<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}
