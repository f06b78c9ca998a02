#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The lock that guards the state of a chain, of the registry and of a control's events.
//
// A pthread mutex rather than Synchronization.Mutex: on Linux, Mutex parks threads with futex
// calls that ThreadSanitizer does not see, so every access it guards is reported as a race, and
// DESIGN §6.1 asks for TSan-clean runs. The mutex lives at a stable heap address, as pthread
// requires; it is allocated once per lock, when its owner is created, never on the hot path.
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

  // Plain lock and unlock, for the delivery path: a generic `run` closure returning a generic
  // value makes unspecialized code look up run-time type metadata on every call.
  borrowing func lock() { pthread_mutex_lock(mutex) }
  borrowing func unlock() { pthread_mutex_unlock(mutex) }

  // Runs `body` with the lock held. `body` must not run user code, nor release anything whose
  // deinit might (hand such things out as the result and let them go after unlocking).
  borrowing func run<Result>(_ body: () throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }
}
