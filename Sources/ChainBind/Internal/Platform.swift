// The one place that imports the platform's C library: a mutex, a processor yield, a write to
// standard error, a thread-local pointer, and whether this thread runs the main queue.
internal import ChainBindThreadLocal
import Dispatch
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

// A pthread mutex at a stable heap address, as pthread requires. Not Synchronization.Mutex: on
// Linux that parks threads with futex calls ThreadSanitizer does not see, so every access it
// guards would be reported as a race.
//
// @unchecked Sendable: the pointer is only ever used through pthread_mutex_lock and unlock.
@usableFromInline
struct PlatformMutex: ~Copyable, @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  // `alone`: on cache lines of its own, for a lock that threads take often without waiting for
  // each other (a registry shard): no other lock's or object's writes then share its lines.
  init(alone: Bool = false) {
    if alone {
      let size = MemoryLayout<pthread_mutex_t>.size
      let bytes = (size + cacheLineSize - 1) / cacheLineSize * cacheLineSize
      mutex = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: cacheLineSize)
        .bindMemory(to: pthread_mutex_t.self, capacity: 1)
    } else {
      mutex = .allocate(capacity: 1)
    }
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  @usableFromInline borrowing func lock() { pthread_mutex_lock(mutex) }
  @usableFromInline borrowing func unlock() { pthread_mutex_unlock(mutex) }
  borrowing func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }
}

// The unit in which processors share memory between them (128 on Apple silicon, where it also
// covers x86's pairs of adjacent 64-byte lines that are fetched together).
let cacheLineSize = 128

// Room that keeps the fields after it off the cache lines of what precedes it in memory, and
// the fields before it off those of what follows: 128 bytes.
struct CacheLinePadding {
  private let words: (UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0, 0, 0, 0)
  private let more: (UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0, 0, 0, 0)
}

// The calling thread's identity, for "is this thread the one delivering?" (ChainCore.swift):
// never 0, and unique among running threads. `pthread_self()` reads a thread register.
@inlinable
@inline(__always)
func currentThreadID() -> UInt {
  #if os(Windows)
    return UInt(GetCurrentThreadId()) &+ 1
  #elseif canImport(Glibc)
    return UInt(pthread_self())
  #else
    return UInt(bitPattern: pthread_self())
  #endif
}

// Where a chain with no actor has what a call left delivered: a job on a Dispatch queue of its
// own, one per chain at a time (Docs/Semantics.md, "Threading").
enum Relay {
  final class Job: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  // Which threads' relays a test holds (`Bind.withSchedulePoints`).
  final class Holder: Sendable {
    let holds: @Sendable () -> Bool
    init(_ holds: @escaping @Sendable () -> Bool) { self.holds = holds }
  }

  // While a test runs its threads' steps in a chosen order (`Bind.withSchedulePoints`), the
  // relays its threads start wait here for it (`runHeld`): one on a thread of its own would run
  // outside the order.
  private static let held = Locked<(holder: Holder?, jobs: [Job])>((nil, []))

  static func start(_ job: @escaping @Sendable () -> Void) {
    // The test's answer is asked outside the lock: it is the test's code.
    if let holder = held.withLock({ $0.holder }), holder.holds() {
      let isHeld = held.withLock { held -> Bool in
        guard held.holder === holder else { return false }
        held.jobs.append(Job(job))
        return true
      }
      if isHeld { return }
    }
    run(job)
  }

  // A queue of its own for each relay: a serial queue overcommits, so the relay gets a thread
  // even when every thread of Dispatch's pool is blocked (a test waiting, a sink that blocks);
  // a relay that blocks in user code holds up no other chain's.
  private static func run(_ job: @escaping @Sendable () -> Void) {
    DispatchQueue(label: "ChainBind.relay").async(execute: job)
  }

  // Runs the relays held for a test on this thread, and those they start, until none is left.
  static func runHeld() {
    while let job = held.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) { job.run() }
  }

  // Starts holding the relays of the threads `holder` names, or (nil) stops and starts those
  // held, each on a queue of its own.
  static func hold(_ holder: Holder?) {
    let released = held.withLock { held -> [Job] in
      held.holder = holder
      guard holder == nil else { return [] }
      defer { held.jobs = [] }
      return held.jobs
    }
    for job in released { run(job.run) }
  }
}

// Gives the processor to another thread; for a lock that spun long enough.
func yieldProcessor() {
  #if os(Windows)
    _ = SwitchToThread()
  #else
    _ = sched_yield()
  #endif
}

// Writes `line` and a line feed to standard error in as few writes as the system allows, or
// hands `line` to the capture of a test running on this task (`Bind.withStandardErrorCaptured`).
func writeToStandardError(_ line: String) {
  if StandardErrorCapture.openCount.load(ordering: .relaxed) > 0,
    let capture = StandardErrorCapture.current
  {
    return capture.write(line)
  }
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

// A pointer of each thread's own, in one of a fixed set of slots: the probe of the thread that is
// binding (BoundToken.swift), the actor a thread drains (Isolation.swift), and others. A C
// thread-local array (ChainBindThreadLocal.h): a tracked re-read reads and writes one per
// property it reads, and a pthread key cost a call into the C library for each.
//
// The array is a static of a header's function, so every object file that inlines that function
// has an array of its own: only `value` and `set` call it, never inlined, so there is one
// (.ci/run checks the release build for a second).
struct ThreadLocalPointer: Sendable {
  // One case per slot: the raw values stay below CHAINBIND_THREAD_SLOT_COUNT, so every access to
  // the thread's array is in bounds.
  enum Slot: Int, CaseIterable {
    case reader, syncedMember, drainingActor, drainedOrigin, isMainThread
  }

  private let slot: Slot

  init(_ slot: Slot) {
    assert(Slot.allCases.count <= Int(CHAINBIND_THREAD_SLOT_COUNT), "more slots than the array")
    self.slot = slot
  }

  var value: UnsafeMutableRawPointer? {
    @inline(never) get { chainbind_thread_slots()[slot.rawValue] }
  }

  @inline(never)
  func set(_ value: UnsafeMutableRawPointer?) {
    chainbind_thread_slots()[slot.rawValue] = value
  }
}

// Whether this thread runs the main queue now, and so the main actor's code: the main thread on
// Apple platforms. Elsewhere, the main thread, or whichever thread drains the main queue (on
// Linux, once a program calls `dispatchMain()`, the main thread exits and worker threads drain
// it). Unlike `MainActor.assumeIsolated`, asking does not trap when the answer is no.
enum MainQueue {
  #if !canImport(Darwin)
    // Set on the main queue once. Asked only off the main thread, where the change is queued for
    // the actor anyway: `getSpecific` costs about a thousand instructions there.
    private static let key: DispatchSpecificKey<Bool> = {
      let key = DispatchSpecificKey<Bool>()
      DispatchQueue.main.setSpecific(key: key, value: true)
      return key
    }()
  #endif

  static var isCurrent: Bool {
    #if canImport(Darwin)
      return pthread_main_np() != 0
    #else
      return ThreadKind.isMainThread || DispatchQueue.getSpecific(key: key) == true
    #endif
  }
}

#if !canImport(Darwin)
  // Whether this thread is the process's main thread: the one whose kernel thread ID is the
  // process ID. Asked with two system calls once per thread, then answered by comparing
  // `pthread_self()` with the main thread's, or, until the main thread has asked, from a
  // thread-local answer.
  private enum ThreadKind {
    private static let answers = ThreadLocalPointer(.isMainThread)
    #if canImport(Glibc)
      private typealias GetThreadID = @convention(c) () -> pid_t
      // `gettid` is in the C library (glibc 2.30 and later) but not in its Swift module, and
      // `syscall` is variadic: looked up by name once.
      private static let getThreadID = UInt(bitPattern: dlsym(nil, "gettid"))
    #endif

    static var isMainThread: Bool {
      #if canImport(Glibc)
        let current = UInt(pthread_self())
      #else
        // A pointer (musl) or a signed integer (Android, Windows' pthreads).
        let current = UInt(bitPattern: pthread_self())
      #endif
      let main = mainThreadID.load(ordering: .relaxed)
      if main != 0 { return current == main }
      if let answer = answers.value { return UInt(bitPattern: answer) == 1 }
      var isMain = false
      #if canImport(Glibc)
        if let function = UnsafeRawPointer(bitPattern: getThreadID) {
          isMain = unsafeBitCast(function, to: GetThreadID.self)() == getpid()
        }
      #endif
      if isMain { mainThreadID.store(current, ordering: .relaxed) }
      answers.set(UnsafeMutableRawPointer(bitPattern: isMain ? 1 : 2))
      return isMain
    }
  }

  // `pthread_self()` of the main thread once it has asked; 0 until then.
  private let mainThreadID = Atomic<UInt>(0)
#endif
