// The one place that imports the platform's C library: a mutex, a processor yield and a write to
// standard error, for Lock.swift and for the default error reporter.
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

// A pthread mutex at a stable heap address, as pthread requires. Not Synchronization.Mutex: on
// Linux that parks threads with futex calls ThreadSanitizer does not see, so every access it
// guards would be reported as a race.
//
// @unchecked Sendable: the pointer is only ever used through pthread_mutex_lock and unlock.
struct PlatformMutex: ~Copyable, @unchecked Sendable {
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
  borrowing func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }
}

// Gives the processor to another thread; for a lock that spun long enough.
func yieldProcessor() {
  #if os(Windows)
    _ = SwitchToThread()
  #else
    _ = sched_yield()
  #endif
}

// Writes `line` and a line feed to standard error in as few writes as the system allows.
func writeToStandardError(_ line: String) {
  var line = line
  line.append("\n")
  line.withUTF8 { bytes in
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
      #if os(Windows)
        let written = Int(_write(2, base + offset, UInt32(bytes.count - offset)))
      #else
        let written = write(2, base + offset, bytes.count - offset)
      #endif
      if written <= 0 { return }
      offset += written
    }
  }
}

// A pointer of each thread's own: the probe of the thread that is binding (BoundToken.swift).
// A pthread key rather than a task-local value, which costs an allocation and a push and pop
// per bind.
struct ThreadLocalPointer: Sendable {
  private let key: pthread_key_t

  init() {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    self.key = key
  }

  var value: UnsafeMutableRawPointer? {
    pthread_getspecific(key)
  }

  func set(_ value: UnsafeMutableRawPointer?) {
    pthread_setspecific(key, value)
  }
}
