// The soak mode: every everyday operation, repeated in blocks, to catch a cost or a memory that
// grows with use. Issue #28 was one: each report to the fallback error handler made the next
// one slower, and about 200 000 of them crashed the process.
//
// Each operation runs `uses` times in 6 blocks, after a block of warm-up. A block's cost is the
// best of its 8 sub-blocks in CPU time, of the thread that runs the uses (of the process, for an
// operation whose work runs on other threads, all kept on one processor): another process taking
// the processor or sharing its core makes a sub-block slower, never faster. Its memory is the
// least of the heap's bytes in use at the sub-blocks' ends. An operation fails when its last
// block costs more than 2 × its first, or when the heap grew from the first block's end to the
// last's by more than `memoryBound(uses:)`; a last block that looks grown is run again, twice at
// most, and the best of them counts: what grows with use is higher again, a moment of load is
// not.
import ChainBind
import Dispatch
import MallocStats
import Observation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a soak operation's cost is measured in.
enum SoakClock {
  /// The CPU time of the thread that runs the uses.
  case thread
  /// The CPU time of the whole process: for work handed to another thread (an actor's queue).
  case process

  var nanoseconds: UInt64 {
    var time = timespec()
    clock_gettime(self == .thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }
}

/// One operation of the soak: `make` sets it up and returns its uses.
struct SoakOperation {
  let name: String
  var clock = SoakClock.thread
  let make: () -> SoakUses
}

/// What an operation does once set up.
struct SoakUses {
  /// One use; the argument counts the uses from 0.
  let use: (Int) -> Void
  /// After each sub-block, inside its timing: waits for the work its `count` uses handed to
  /// other threads.
  var settle: (_ count: Int) -> Void = { _ in }
  /// After the last block, with the number of uses run: checks that they did what they should
  /// (a precondition), and undoes what `make` changed process-wide.
  var finish: (_ uses: Int) -> Void = { _ in }
}

/// A task executor that runs its jobs on the thread that asks, when it asks.
final class SoakTaskExecutor: TaskExecutor, @unchecked Sendable {
  private let jobs = Mutex<[UnownedJob]>([])

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    jobs.withLock { $0.append(job) }
  }

  /// Runs the jobs given, and those they give, until none is left.
  func runJobs() {
    while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// A text field: sends `.editingChanged` when its user types.
final class SoakField: ControlEventSource, @unchecked Sendable {
  enum Event { case editingChanged }
  let controlEvents = ControlEvents<Event>()
  var text = ""

  func type(_ text: String) {
    self.text = text
    controlEvents.send(.editingChanged)
  }
}

/// The model of the soak's chains (`@unchecked Sendable`: bound on the main actor by the
/// isolated operation, then set only by the soak thread).
final class SoakModel: @unchecked Sendable {
  @Bound var number = 0
  @Bound var text = ""
  @Bound var rows: [Int] = []
}

/// Counts calls from any thread, and signals each one, for operations that wait for them.
final class Tally: Sendable {
  let count = Atomic<Int>(0)
  let calls = DispatchSemaphore(value: 0)

  func add() { count.add(1, ordering: .relaxed) }

  func load() -> Int { count.load(ordering: .relaxed) }

  func addAndSignal() {
    count.add(1, ordering: .relaxed)
    calls.signal()
  }

  func wait(for calls: Int) {
    for _ in 0..<calls { self.calls.wait() }
  }

  /// Waits for one call; a call that does not come within 10 s fails the soak, not hangs it.
  func waitForOne() {
    guard calls.wait(timeout: .now() + 10) == .success else {
      print("soak: a use's call did not come within 10 s")
      exit(1)
    }
  }
}

/// Texts that no `Int` is: each one a `.backConversionFailed` report.
private let rejectedTexts = ["a", "12a", "4.2", "", " x ", "1e3", "--1", "٣"]

/// Points standard error at /dev/null, where the default fallback handler then writes each
/// report; returns what puts it back.
private func discardStandardError() -> () -> Void {
  let saved = dup(2)
  let null = open("/dev/null", O_WRONLY)
  guard saved >= 0, null >= 0 else { return {} }
  dup2(null, 2)
  close(null)
  return {
    dup2(saved, 2)
    close(saved)
  }
}

/// Keeps `objects` alive until the operation's end, then checks that `count()` is the number of
/// uses, and unbinds `chain`: a chain ends with its sending objects, and a member with its object.
private func finish<Value>(
  _ chain: Chain<Value>, keeping objects: AnyObject..., counting count: (() -> Int)? = nil
) -> (Int) -> Void {
  { uses in
    withExtendedLifetime(objects) {
      if let count { precondition(count() == uses, "soak: \(count()) effects of \(uses) uses") }
      chain.unbind()
    }
  }
}

/// Uses of `chain`, from `source`'s `keyPath`, given a target: each `set`s what the key path
/// reads; at the end the target must show what it reads. (The caller binds with the key path's
/// literal, which folds into the member's read as in an app.)
private func following<Source: AnyObject>(
  _ chain: Chain<Int>, _ source: Source, _ keyPath: KeyPath<Source, Int>,
  set: @escaping (Int) -> Void
) -> SoakUses {
  let target = Target()
  chain.out(target, \.value)
  return SoakUses(
    use: set,
    finish: { uses in
      precondition(
        (observationDefersReads && source is any Observable)
          || target.value == source[keyPath: keyPath],
        "soak: the member did not follow")
      finish(chain, keeping: source)(uses)
    })
}

/// Whether a member from an `@Observable` property reads a change later, in a task: outside
/// Linux, Observation tells a change before it is stored (Docs/Semantics.md, "Tracked
/// sources"), so the soak's checks of such members' values are left out there.
#if os(Linux)
  let observationDefersReads = false
#else
  let observationDefersReads = true
#endif

/// Uses that bind a chain (`bind`), give it a target, and unbind it.
private func bindingAndUnbinding(_ bind: @escaping () -> Chain<Int>) -> SoakUses {
  let target = Target()
  return SoakUses(use: { _ in bind().out(target, \.value).unbind() })
}

/// The soak's `@Observable` source, not `ObservedModel`: a use of that class's key path here made
/// Observation's own lookups in the `observable` mode slower (Docs/Performance.md, "Soak").
@Observable final class SoakObserved { var value = 0 }

/// A two-way pair of an `Int` model and a text field, as in a form; `configure` adds to the
/// chain before the field.
private func numberField(_ configure: (Chain<Int>) -> Void = { _ in }) -> (
  SoakModel, SoakField, Chain<Int>
) {
  let model = SoakModel()
  let field = SoakField()
  let chain = Bind.inout(model, \.number)
  configure(chain)
  chain.inout(field, \.text, on: .editingChanged)
  return (model, field, chain)
}

/// A main-actor chain of `model.number`, whose `model.text` member (a `String`, converted) is set
/// off the main actor, and whose errors go to `tally`.
@MainActor private func bindOnMainActor(_ model: SoakModel, _ tally: Tally) -> Chain<Int> {
  Bind.inout(model, \.number).onError { _ in tally.addAndSignal() }.inout(model, \.text)
}

/// The operations, in the order they run.
func soakOperations() -> [SoakOperation] {
  [
    SoakOperation(name: "set, 1 out") {
      let model = SoakModel()
      let target = Target()
      let chain = Bind.inout(model, \.number).out(target, \.value)
      return SoakUses(use: { model.number = $0 }, finish: finish(chain, keeping: target))
    },
    SoakOperation(name: "fallback report, default handler") {
      let (model, field, chain) = numberField()
      let restore = discardStandardError()
      let unbind = finish(chain, keeping: model)
      return SoakUses(
        use: { field.type(rejectedTexts[$0 % 8]) },
        finish: { uses in
          restore()
          unbind(uses)
        })
    },
    SoakOperation(name: "fallback report, handler set once") {
      let (model, field, chain) = numberField()
      let previous = Bind.fallbackErrorHandler
      let tally = Tally()
      Bind.fallbackErrorHandler = { _ in tally.add() }
      let unbind = finish(chain, keeping: model, counting: tally.load)
      return SoakUses(
        use: { field.type(rejectedTexts[$0 % 8]) },
        finish: { uses in
          Bind.fallbackErrorHandler = previous
          unbind(uses)
        })
    },
    SoakOperation(name: "fallback handler replaced, 1 report") {
      let (model, field, chain) = numberField()
      let previous = Bind.fallbackErrorHandler
      let tally = Tally()
      let unbind = finish(chain, keeping: model, counting: tally.load)
      return SoakUses(
        use: {
          Bind.fallbackErrorHandler = { _ in tally.add() }
          field.type(rejectedTexts[$0 % 8])
        },
        finish: { uses in
          Bind.fallbackErrorHandler = previous
          unbind(uses)
        })
    },
    SoakOperation(name: "onError report") {
      let tally = Tally()
      let (model, field, chain) = numberField { $0.onError { _ in tally.add() } }
      return SoakUses(
        use: { field.type(rejectedTexts[$0 % 8]) },
        finish: finish(chain, keeping: model, counting: tally.load))
    },
    SoakOperation(name: "filter rejection, onReject") {
      let model = SoakModel()
      let target = Target()
      var rejected = 0
      let chain = Bind.inout(model, \.number).out(target, \.value)
        .filter { $0 >= 0 }.onReject { _ in rejected += 1 }
      return SoakUses(
        use: { model.number = -1 - $0 % 100 },
        finish: finish(chain, keeping: target, counting: { rejected }))
    },
    SoakOperation(name: "onReject replaced") {
      let model = SoakModel()
      let chain = Bind.inout(model, \.number).filter { $0 >= 0 }
      var rejected = 0
      return SoakUses(
        use: { _ in chain.onReject { _ in rejected += 1 } }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "out(key:) + removeOut") {
      let model = SoakModel()
      let chain = Bind.inout(model, \.number)
      var total = 0
      return SoakUses(
        use: { _ in
          chain.out(key: "sum") { total &+= $0 }
          chain.removeOut(key: "sum")
        }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "trace + removeTrace") {
      let model = SoakModel()
      let chain = Bind.inout(model, \.number)
      var events = 0
      return SoakUses(
        use: { _ in
          chain.trace { _ in events &+= 1 }
          chain.removeTrace()
        }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "batch of one set") {
      let model = SoakModel()
      let target = Target()
      let chain = Bind.inout(model, \.number).out(target, \.value)
      return SoakUses(
        use: { i in Bind.batch { model.number = i } }, finish: finish(chain, keeping: target))
    },
    SoakOperation(name: "member added and unbound") {
      let model = SoakModel()
      let target = Target()
      let chain = Bind.inout(model, \.number)
      return SoakUses(
        use: { _ in
          chain.out(target, \.value)
          Bind.unbind(target, \.value)
        }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "chain bound and unbound") {
      let model = SoakModel()
      let target = Target()
      return SoakUses(use: { _ in Bind.inout(model, \.number).out(target, \.value).unbind() })
    },
    SoakOperation(name: "computed member's input set") {
      let sum = Sum()
      return following(Bind.in(sum, \.total), sum, \.total) { sum.a = $0 }
    },
    SoakOperation(name: "path's leaf set") {
      let root = Root()
      return following(Bind.in(root, \.mid.leaf.value), root, \.mid.leaf.value) {
        root.mid.leaf.value = $0
      }
    },
    SoakOperation(name: "path's link replaced") {
      let root = Root()
      let mids = [Mid(), Mid()]
      mids[1].leaf.value = 1
      return following(Bind.in(root, \.mid.leaf.value), root, \.mid.leaf.value) {
        root.mid = mids[$0 % 2]
      }
    },
    SoakOperation(name: "@Observable property set") {
      let model = SoakObserved()
      return following(Bind.in(model, \.value), model, \.value) { model.value = $0 }
    },
    SoakOperation(name: "computed chain bound and unbound") {
      let sum = Sum()
      return bindingAndUnbinding { Bind.in(sum, \.total) }
    },
    SoakOperation(name: "path chain bound and unbound") {
      let root = Root()
      return bindingAndUnbinding { Bind.in(root, \.mid.leaf.value) }
    },
    // With a set between: Observation keeps a watch until the property next changes
    // (Docs/Semantics.md, "When a chain ends"), so binds with no set between keep one each.
    SoakOperation(name: "@Observable chain bound, set, unbound") {
      let model = SoakObserved()
      let target = Target()
      return SoakUses(
        use: {
          let chain = Bind.in(model, \.value).out(target, \.value)
          model.value = $0
          chain.unbind()
        },
        finish: { uses in
          precondition(
            observationDefersReads || target.value == uses - 1,
            "soak: the chain did not follow the set")
        })
    },
    SoakOperation(name: "control subscribed and unbound") {
      let model = SoakModel()
      let field = SoakField()
      let chain = Bind.inout(model, \.number)
      return SoakUses(
        use: { _ in
          chain.inout(field, \.text, on: .editingChanged)
          Bind.unbind(field, \.text)
        }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "control event, accepted") {
      let (model, field, chain) = numberField()
      return SoakUses(
        use: { field.type(String($0 % 1_000)) }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "values iterator made and released") {
      let model = SoakModel()
      let chain = Bind.inout(model, \.number)
      let values = chain.values
      return SoakUses(
        use: { _ in withExtendedLifetime(values.makeAsyncIterator()) {} },
        finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "values iterator cancelled") {
      let model = SoakModel()
      let chain = Bind.inout(model, \.number)
      let values = chain.values
      let executor = SoakTaskExecutor()
      let waiting = Atomic(false)
      let ended = Atomic(false)
      let iterate: @Sendable () async -> Void = {
        var iterator = values.makeAsyncIterator()
        // The current value; then a wait, until the task is cancelled.
        _ = await iterator.next()
        waiting.store(true, ordering: .relaxed)
        _ = await iterator.next()
        ended.store(true, ordering: .relaxed)
      }
      return SoakUses(
        use: { _ in
          // The task runs on this thread, when the executor is asked: the use is this
          // thread's work alone, timed whole, with no other thread to wake.
          waiting.store(false, ordering: .relaxed)
          ended.store(false, ordering: .relaxed)
          let task = Task(executorPreference: executor, operation: iterate)
          executor.runJobs()
          precondition(waiting.load(ordering: .relaxed), "soak: the iterator did not wait")
          task.cancel()
          executor.runJobs()
          precondition(ended.load(ordering: .relaxed), "soak: the iterator did not end")
        }, finish: finish(chain, keeping: model))
    },
    SoakOperation(name: "list sink added, list set, removed") {
      let model = SoakModel()
      let chain = Bind.inout(model, \.rows)
      var changes = 0
      return SoakUses(
        use: { i in
          chain.outChanges(key: "rows", initial: false) { (_: ListChange<Int>) in changes += 1 }
          model.rows = [i % 3, 1, 2]
          chain.removeOut(key: "rows")
        }, finish: finish(chain, keeping: model, counting: { changes }))
    },
    SoakOperation(name: "main-actor chain's error, set off the actor", clock: .process) {
      // Each set is queued for the main actor, where it fails to convert and is reported to the
      // chain's handler. Each use waits for its own report: sets that wait for the actor together
      // coalesce into one delivery (Docs/Semantics.md, "Fair delivery"), and so one report.
      let model = SoakModel()
      let tally = Tally()
      let chain = DispatchQueue.main.sync {
        MainActor.assumeIsolated { bindOnMainActor(model, tally) }
      }
      return SoakUses(
        use: {
          model.text = rejectedTexts[$0 % 8]
          tally.waitForOne()
        }, settle: { _ in },
        finish: { uses in
          precondition(tally.load() == uses, "soak: \(tally.load()) errors of \(uses) uses")
          DispatchQueue.main.sync { MainActor.assumeIsolated { chain.unbind() } }
        })
    },
  ]
}

/// What one operation measured: nanoseconds per use in its first and last blocks, and the heap's
/// growth from the first block's end to the last's.
struct SoakResult {
  let name: String
  let first: Double
  let last: Double
  let growth: Int
  let bound: Int
  /// Blocks run again because the last one looked grown.
  let rechecks: Int

  var ratio: Double { last / first }
  var isFlat: Bool { ratio <= 2 && growth <= bound }
}

let soakBlocks = 6
let soakSubBlocks = 8
/// Blocks run again, at most, when the last one looks grown: cost and memory that grow with use
/// are higher again in them, a moment of another process's load is not.
let soakRechecks = 2

/// The heap's growth allowed from the first block's end to the last's.
///
/// 64 KiB, or 1 byte per use in between when more. A use that keeps even the smallest heap block (32 bytes) exceeds it 32
/// times over; what the allocator, the runtime or the dispatch library caches once stays under
/// it (the operations grew by 10 KiB at most, Docs/Performance.md, "Soak").
func memoryBound(uses: Int) -> Int { max(64 * 1024, uses) }

/// Runs `operation` in `soakBlocks` blocks of `blockSize` uses, after a block of warm-up.
func soak(_ operation: SoakOperation, blockSize: Int) -> SoakResult {
  let uses = operation.make()
  let subBlock = max(1, blockSize / soakSubBlocks)
  var counter = 0
  func run(_ count: Int) {
    for _ in 0..<count {
      uses.use(counter)
      counter += 1
    }
    uses.settle(count)
  }
  // One block: the best cost per use of its sub-blocks, and the least of the heap's sizes at
  // their ends (what another thread still holds for a moment, a finished task or a drained job,
  // is not growth).
  func block() -> (cost: Double, memory: Int) {
    var best = Double.infinity
    var least = Int.max
    for _ in 0..<soakSubBlocks {
      let start = operation.clock.nanoseconds
      run(subBlock)
      best = min(best, Double(operation.clock.nanoseconds - start) / Double(subBlock))
      least = min(least, Int(profile_heap_bytes_in_use()))
    }
    return (best, least)
  }
  run(subBlock * soakSubBlocks)
  let first = block()
  var last = first
  for _ in 1..<soakBlocks { last = block() }
  // An operation whose work runs on other threads may leave Dispatch's per-thread caches of
  // freed work items filled (measured: +96 272 bytes, the same after 12 000 and 48 000 uses):
  // 160 KiB more is not growth; a use that keeps even 32 bytes still fails it.
  let bound =
    memoryBound(uses: (soakBlocks - 1) * subBlock * soakSubBlocks)
    + (operation.clock == .process ? 160 * 1024 : 0)
  var rechecks = 0
  while rechecks < soakRechecks
    && (last.cost > 2 * first.cost || last.memory - first.memory > bound)
  {
    let again = block()
    last = (min(last.cost, again.cost), min(last.memory, again.memory))
    rechecks += 1
  }
  uses.finish(counter)
  return SoakResult(
    name: operation.name, first: first.cost, last: last.cost,
    growth: last.memory - first.memory, bound: bound, rechecks: rechecks)
}

/// Runs every operation whose name contains `only` (every operation when nil) `uses` times,
/// prints a line for each, and returns whether all were flat.
func runSoak(uses: Int, only: String?) -> Bool {
  let blockSize = max(1, uses / soakBlocks / soakSubBlocks) * soakSubBlocks
  let memoryKind =
    profile_heap_bytes_are_exact() != 0 ? "heap bytes in use" : "resident memory (no heap count)"
  print(
    "soak: \(soakBlocks) blocks of \(blockSize) uses per operation, each the best of",
    "\(soakSubBlocks) sub-blocks in CPU time; memory: \(memoryKind)")
  func column(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
  }
  func nanoseconds(_ value: Double) -> String {
    value < 100 ? "\(Double(Int(value * 10)) / 10) ns" : "\(Int(value.rounded())) ns"
  }
  print(
    "operation".padding(44), column("first", 11), column("last", 11), column("last/first", 11),
    column("memory", 12))
  var failed: [String] = []
  for operation in soakOperations() where only.map(operation.name.contains) ?? true {
    let result = soak(operation, blockSize: blockSize)
    var line = [
      result.name.padding(44), column(nanoseconds(result.first), 11),
      column(nanoseconds(result.last), 11),
      column("\(Double(Int(result.ratio * 100)) / 100)", 11),
      column("\(result.growth >= 0 ? "+" : "")\(result.growth) B", 12),
    ]
    if result.rechecks > 0 { line.append("(last block run \(result.rechecks + 1) times)") }
    if !result.isFlat { line.append("<- grows") }
    print(line.joined(separator: " "))
    if !result.isFlat { failed.append(result.name) }
  }
  if failed.isEmpty {
    print(
      "soak: every operation flat (last block at most 2 × its first; memory growth at most",
      "\(memoryBound(uses: (soakBlocks - 1) * blockSize)) bytes)")
  } else {
    print("soak: FAILED, grows with use: \(failed.joined(separator: ", "))")
  }
  return failed.isEmpty
}

/// Starts the soak on a thread of its own and gives the main thread to the main queue, which
/// runs the main actor's jobs (the isolated operation queues its errors there); exits when done.
func startSoak(uses: Int, only: String?) -> Never {
  // One processor for every thread of the process (threads made later inherit it): a change
  // handed to the main actor wakes a thread on the same processor, which costs the same each
  // time; across two it costs from 1 to 5 times as much, by where each thread last ran.
  profile_run_on_one_processor()
  DispatchQueue(label: "soak").async { exit(runSoak(uses: uses, only: only) ? 0 : 1) }
  dispatchMain()
}

extension String {
  fileprivate func padding(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
