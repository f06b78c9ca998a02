// A plain executable for profiling ChainBind under valgrind (no benchmark harness, no
// interposer). Every `floor…` mode is the hand-written peer of the mode it follows.
//   HotPathProfile chainbind|scale|floor [N]   `set → 1 out` N times (scale: with 100 000 other
//                                               live chains; floor: the hand-written peer, a
//                                               `didSet` calling a closure with a weak target)
//   HotPathProfile string|floorstring [N]      `set → 1 out` N times, Int → String (floorstring:
//                                               the closure writes `String(value)`)
//   HotPathProfile double [N]                  `set → 1 out` N times, Int → Double
//   HotPathProfile filter [N]                  `set → 1 out` N times through a filter and a
//                                               convert closure (Int → String)
//   HotPathProfile sink [N]                    N sets of a chain with one sink, no members
//   HotPathProfile twoway|floortwoway|leantwoway [N]
//                                              N sets alternating between the two `@Bound`
//                                               ends of a two-way pair (floortwoway: two
//                                               `didSet` models writing each other weakly,
//                                               with an echo guard; leantwoway: each end's
//                                               `didSet` calls one optional closure behind a
//                                               busy flag, which writes only a new value)
//   HotPathProfile boundread|floorread [N]     N reads, summed, of a bound `@Bound` Int property
//                                               (floorread: of a plain stored Int property)
//   HotPathProfile churn [N]                   N cycles of: make a source and a target, bind
//                                               them, release both (auto-unbind)
//   HotPathProfile churnobservable|churnnested|churncomputed [N]
//                                               as churn, from an `@Observable` object's
//                                               property, a two-link `@Bound` path, or a
//                                               computed property over two `@Bound` ones
//   HotPathProfile addmember [N]               N plain members added to one chain, their
//                                               objects alive
//   HotPathProfile churn2|computed2 [N]        churn, or computed, on two threads at once, N
//                                               operations each (callgrind runs the threads one
//                                               at a time: it counts the work, not the waiting)
//   HotPathProfile scaling [N]                 wall clock: churn and computed on one thread,
//                                               then on two at once (N operations each), three
//                                               rounds; prints two threads' throughput over one
//                                               (churnsplit: the second thread churns classes of
//                                               its own, so no key-path literal is shared)
//   HotPathProfile memoryobservable|objectsobservable [N]
//                                               as memory, from an `@Observable` object's
//                                               property; objectsobservable makes the objects
//                                               and arrays only, binding nothing
//   HotPathProfile memory [N]                  binds N chains and exits with them all alive,
//                                               for valgrind's per-allocation-site report
//   HotPathProfile nested|floornested [N]      N sets of the leaf of a three-link `@Bound` path
//                                               bound `in` (floornested: the same path written
//                                               by hand, each link's `didSet` moving the
//                                               leaf's closure to the new leaf)
//   HotPathProfile relink|floorrelink [N]      N sets of the middle link of that path, to one
//                                               of two objects in turn (floorrelink: by hand)
//   HotPathProfile observable|floorobservable [N]
//                                               N sets of an `@Observable` object's property
//                                               bound `in` (floorobservable: Observation's
//                                               public `withObservationTracking`, re-armed after
//                                               each set, delivering to a closure)
//   HotPathProfile memorynested|memorycomputed|objectsnested|objectscomputed [N]
//                                               as memoryobservable, from a two-link `@Bound`
//                                               path or a computed property
//   HotPathProfile computed|floorcomputed [N]  N sets of one of the two `@Bound` properties a
//                                               computed member reads (floorcomputed: `didSet`s
//                                               that recompute, compare and call a closure)
//   HotPathProfile list1|list10|listshuffle [N]
//                                               N / 1 000 `ListChange`s of 10 000 rows with 1
//                                               or 10 edits, or every row moved; difference1,
//                                               difference10, differenceshuffle: the standard
//                                               library's `difference(from:)` on the same lists
//   HotPathProfile listdk|differencedk [N]    N / 1 000 `ListChange`s (differencedk: the
//                                               standard library's `difference(from:)`) of 5 000
//                                               rows, DifferenceKit's benchmark case: 1 000
//                                               removed, 1 000 inserted, 200 moved, every
//                                               100th updated
//   HotPathProfile stepsdk [N]                 as listdk, and the change's `steps` read
//   HotPathProfile mainactor [N]               as chainbind, in a chain isolated to the main
//                                               actor and set on it
//   HotPathProfile contendedsinks|contendedtwoway|contendedmainactor|contendedfloor [MS]
//                                               a producer sets a chain's source for MS ms
//                                               (3 000) while another thread (or the main
//                                               actor's timer) uses the chain: its worst call
//                                               (lateness), the deliveries, the heap's growth
//                                               (Contended.swift)
//   HotPathProfile traced [N]                  `chainbind` with a tracer that counts events:
//                                               what tracing costs (values described)
//   HotPathProfile batch [N]                   `chainbind`'s N sets made in batches of 100
//                                               (`Bind.batch`): one delivery per batch
//   HotPathProfile soak [N [NAME]]             every everyday operation (or those whose name
//                                               contains NAME) N times (default 120 000) in 6
//                                               blocks; prints each one's first and last block
//                                               and its memory growth, and exits 1 when a last
//                                               block costs more than 2 × its first or memory
//                                               grows (Soak.swift)
//   HotPathProfile values|valuesstream [N]     N sets of a chain with one `values` iterator
//                                               that keeps the latest value (valuesstream: the
//                                               hand-written peer, a sink yielding into an
//                                               `AsyncStream` buffering the newest value)
// An unknown mode prints the list of modes and exits with status 2.
import ChainBind
import Dispatch
import Observation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

final class Model { @Bound var value = 0 }
final class HandModel {
  var observers: [(Int) -> Void] = []
  var value = 0 { didSet { for o in observers { o(value) } } }
}
final class Target { var value = 0 }
final class TextTarget { var text = "" }
/// A `@Bound` text that sends through the automatic `back:` conversion, for `stringback`.
final class TextSource { @Bound var text = "" }
final class NumberTarget { var number = 0.0 }
/// The read floor's object: a plain stored property, never bound.
final class PlainModel { var value = 0 }
/// The hand-written two-way pair's guard against echoes.
final class EchoGuard { var isForwarding = false }
/// One end of the lean hand-written two-way pair: its `didSet` writes the other end (unowned)
/// through one optional closure, behind a busy flag; the closure writes only a different value.
final class LeanEnd {
  var isBusy = false
  var onChange: ((Int) -> Void)?
  var value = 0 {
    didSet {
      guard !isBusy else { return }
      isBusy = true
      onChange?(value)
      isBusy = false
    }
  }
}

/// The `@Observable` source of `churnobservable` and `memoryobservable`.
@Observable final class ObservedModel { var value = 0 }
/// The two-link path of `churnnested`: holder.leaf.value.
final class Holder { @Bound var leaf = Leaf() }

/// A three-link path for `nested`: root.mid.leaf.value, every link `@Bound`.
final class Leaf { @Bound var value = 0 }
final class Mid { @Bound var leaf = Leaf() }
final class Root { @Bound var mid = Mid() }
/// The hand-written peer of Root, Mid and Leaf (`floornested`, `floorrelink`): each link's
/// `didSet` moves the observer from the old leaf to the new one and delivers the new value.
final class HandLeaf {
  var onChange: ((Int) -> Void)?
  var value = 0 { didSet { onChange?(value) } }
}
final class HandMid {
  var onLeaf: ((HandLeaf, HandLeaf) -> Void)?
  var leaf = HandLeaf() { didSet { onLeaf?(oldValue, leaf) } }
}
final class HandRoot {
  var onMid: ((HandMid, HandMid) -> Void)?
  var mid = HandMid() { didSet { onMid?(oldValue, mid) } }
}
/// Observes `root.mid.leaf.value` by hand, writing it to `target` (weakly).
func observePath(_ root: HandRoot, writingTo target: Target) {
  let deliver: (Int) -> Void = { [weak target] in target?.value = $0 }
  func attach(_ leaf: HandLeaf) { leaf.onChange = deliver }
  func attach(_ mid: HandMid) {
    mid.onLeaf = { old, new in
      old.onChange = nil
      attach(new)
      deliver(new.value)
    }
    attach(mid.leaf)
  }
  root.onMid = { old, new in
    old.onLeaf = nil
    old.leaf.onChange = nil
    attach(new)
    deliver(new.leaf.value)
  }
  attach(root.mid)
  deliver(root.mid.leaf.value)
}
@inline(never) func setRepeatedly(_ leaf: HandLeaf, _ n: Int) { for i in 0..<n { leaf.value = i } }
@inline(never) func relinkRepeatedly(_ root: Root, _ mids: (Mid, Mid), _ n: Int) {
  for i in 0..<n { root.mid = i & 1 == 0 ? mids.0 : mids.1 }
}
@inline(never) func relinkRepeatedly(_ root: HandRoot, _ mids: (HandMid, HandMid), _ n: Int) {
  for i in 0..<n { root.mid = i & 1 == 0 ? mids.0 : mids.1 }
}
/// The hand-written peer of an `@Observable` source (`floorobservable`): Observation's public
/// API fires once, in `willSet`, and must be armed again; its `onChange` is `@Sendable`, so it
/// raises a flag, and the writer calls `pump()` after the set, which re-arms and delivers.
final class ObservationLink {
  private let model: ObservedModel
  private let deliver: (Int) -> Void
  private let changed = Atomic<Bool>(false)

  init(_ model: ObservedModel, deliver: @escaping (Int) -> Void) {
    self.model = model
    self.deliver = deliver
    arm()
  }

  private func arm() {
    let value = withObservationTracking {
      model.value
    } onChange: { [self] in
      changed.store(true, ordering: .relaxed)
    }
    deliver(value)
  }

  func pump() { if changed.exchange(false, ordering: .relaxed) { arm() } }
}
extension ObservationLink: @unchecked Sendable {}
@inline(never) func setRepeatedly(_ model: ObservedModel, _ n: Int) {
  for i in 0..<n { model.value = i }
}
@inline(never) func setRepeatedly(_ model: ObservedModel, _ link: ObservationLink, _ n: Int) {
  for i in 0..<n {
    model.value = i
    link.pump()
  }
}
/// A computed property over two `@Bound` properties, for `computed`.
final class Sum {
  @Bound var a = 0
  @Bound var b = 0
  var total: Int { a + b }
}
/// The hand-written peer of `Sum`: each set recomputes the total and calls the observers when it
/// changed.
final class HandSum {
  var observers: [(Int) -> Void] = []
  private var last = 0
  var a = 0 { didSet { recompute() } }
  var b = 0 { didSet { recompute() } }
  private func recompute() {
    let total = a + b
    guard total != last else { return }
    last = total
    for o in observers { o(total) }
  }
}

/// A row of the list benchmarks: 10 000 of them, matched by `id`.
struct Row: Identifiable, Equatable {
  let id: Int
  var text: String
}

/// The lists of the `list…` modes: `edits` rows moved or replaced in 10 000, or all shuffled.
func listPair(edits: Int?) -> (old: [Row], new: [Row]) {
  let old = (0..<10_000).map { Row(id: $0, text: "row \($0)") }
  var new = old
  guard let edits else {
    // A fixed permutation: reversed halves interleaved (every row moves; no randomness).
    let half = new.count / 2
    new = (0..<half).flatMap { [old[half - 1 - $0], old[new.count - 1 - $0]] }
    return (old, new)
  }
  // Spread over the list, none a no-op: even edits move a row by thousands of places, odd ones
  // change a row's text.
  for edit in 0..<edits {
    let at = (1_234 + edit * 997) % new.count
    if edit % 2 == 0 {
      new.insert(new.remove(at: at), at: (at + 4_321) % new.count)
    } else {
      new[at].text += "!"
    }
  }
  return (old, new)
}

/// The lists of `listdk` and `differencedk`, after DifferenceKit's benchmark: 5 000 rows, 1 000
/// removed, 1 000 inserted, 200 moved and every 100th updated, spread over the list by fixed
/// strides (no randomness).
func differenceKitPair() -> (old: [Row], new: [Row]) {
  let old = (0..<5_000).map { Row(id: $0, text: "row \($0)") }
  // Every 5th row removed (1 000), every 100th row updated (50).
  var new = old.filter { $0.id % 5 != 2 }
  for offset in new.indices where new[offset].id % 100 == 0 { new[offset].text += "!" }
  // 200 rows, every 20th kept one, each moved by a third of the list: 200 moves.
  for id in stride(from: 10, to: new.count, by: 20).map({ new[$0].id }) {
    guard let from = new.firstIndex(where: { $0.id == id }) else { continue }
    new.insert(new.remove(at: from), at: (from + 1_333) % new.count)
  }
  // 1 000 new rows, one every 5 places.
  for insertion in 0..<1_000 {
    new.insert(Row(id: 5_000 + insertion, text: "new \(insertion)"), at: insertion * 5)
  }
  return (old, new)
}

@inline(never) func consume(_ x: Int) { if x == -1 { print(x) } }
@inline(never) func setRepeatedly(_ leaf: Leaf, _ n: Int) { for i in 0..<n { leaf.value = i } }
@inline(never) func setRepeatedly(_ sum: Sum, _ n: Int) { for i in 0..<n { sum.a = i } }
@inline(never) func setRepeatedly(_ sum: HandSum, _ n: Int) { for i in 0..<n { sum.a = i } }

// The sets, with the source as a parameter: a global read in the loop would add a retain and a
// release of the source per set to both sides.
@inline(never) func setRepeatedly(_ model: Model, _ n: Int) { for i in 0..<n { model.value = i } }
// Small strings: stored inline, so the loop allocates nothing of its own.
@inline(never) func setRepeatedly(_ source: TextSource, _ digits: [String], _ n: Int) {
  for i in 0..<n { source.text = digits[i % 10] }
}
@inline(never) func setAlternately(_ left: Model, _ right: Model, _ n: Int) {
  for i in 0..<n {
    if i & 1 == 0 { left.value = i } else { right.value = i }
  }
}
@inline(never) func setRepeatedly(_ model: HandModel, _ n: Int) {
  for i in 0..<n { model.value = i }
}
@inline(never) func setAlternately(_ left: HandModel, _ right: HandModel, _ n: Int) {
  for i in 0..<n {
    if i & 1 == 0 { left.value = i } else { right.value = i }
  }
}
// The floors' observers. They are made here and not in top-level code, which is @MainActor in
// Swift 6: a closure formed there checks on every call that it runs on the main executor (about
// 110 instructions), which the hand-written code of a library's user does not pay.
func observe(_ model: HandModel, writingTo target: Target) {
  model.observers.append { [weak target] in target?.value = $0 }
}
func observe(_ model: HandModel, writingTextTo text: TextTarget) {
  model.observers.append { [weak text] in text?.text = String($0) }
}
func pair(_ left: LeanEnd, _ right: LeanEnd) {
  left.onChange = { [unowned right] value in
    if right.value != value { right.value = value }
  }
  right.onChange = { [unowned left] value in
    if left.value != value { left.value = value }
  }
}
@inline(never) func setAlternately(_ left: LeanEnd, _ right: LeanEnd, _ n: Int) {
  for i in 0..<n {
    if i & 1 == 0 { left.value = i } else { right.value = i }
  }
}
func pair(_ left: HandModel, _ right: HandModel) {
  let echo = EchoGuard()
  left.observers.append { [weak right, echo] v in
    guard !echo.isForwarding else { return }
    echo.isForwarding = true
    right?.value = v
    echo.isForwarding = false
  }
  right.observers.append { [weak left, echo] v in
    guard !echo.isForwarding else { return }
    echo.isForwarding = true
    left?.value = v
    echo.isForwarding = false
  }
}

// The reads, summed into the result so that none of them is dropped. Summing is not enough for a
// plain property: its load is hoisted out of the loop and the sum becomes one multiplication. An
// acquiring fence before each read forbids that; on x86 it is a compiler barrier (no instruction),
// and both loops have it.
@inline(never) func readRepeatedly(_ model: Model, _ n: Int) -> Int {
  var sum = 0
  for _ in 0..<n {
    atomicMemoryFence(ordering: .acquiring)
    sum &+= model.value
  }
  return sum
}
@inline(never) func readRepeatedly(_ model: PlainModel, _ n: Int) -> Int {
  var sum = 0
  for _ in 0..<n {
    atomicMemoryFence(ordering: .acquiring)
    sum &+= model.value
  }
  return sum
}

// Bind-and-release cycles, each from a fresh source and target.
@inline(never) nonisolated func churn(_ n: Int) {
  for _ in 0..<n {
    let model = Model()
    let target = Target()
    // Kept alive to the end of the cycle, like the benchmark's `blackHole`; `memberCount` would
    // add a search for dead members.
    consume(Bind.inout(model, \.value).out(target, \.value).isActive ? 1 : 0)
  }
}
// Adds n plain members to one chain, their objects alive: each addition's cost must not grow
// with the chain (Docs/Semantics.md, "Threading").
@inline(never) nonisolated func addMembers(_ n: Int) {
  let model = Model()
  let targets = (0..<n).map { _ in Target() }
  let chain = Bind.in(model, \.value)
  for target in targets { chain.out(target, \.value) }
  model.value = 1
  precondition(targets.allSatisfy { $0.value == 1 })
}
@inline(never) nonisolated func churnObservable(_ n: Int) {
  for _ in 0..<n {
    let model = ObservedModel()
    let target = Target()
    consume(Bind.inout(model, \.value).out(target, \.value).isActive ? 1 : 0)
  }
}
@inline(never) nonisolated func churnNested(_ n: Int) {
  for _ in 0..<n {
    let holder = Holder()
    let target = Target()
    consume(Bind.in(holder, \.leaf.value).out(target, \.value).isActive ? 1 : 0)
  }
}
@inline(never) nonisolated func churnComputed(_ n: Int) {
  for _ in 0..<n {
    let sum = Sum()
    let target = Target()
    consume(Bind.in(sum, \.total).out(target, \.value).isActive ? 1 : 0)
  }
}
// `churn` with classes of its own: on a second thread beside `churn`, the two share no key-path
// literal either (their reference counts are written by every bind).
final class OtherModel { @Bound var value = 0 }
final class OtherTarget { var value = 0 }
@inline(never) nonisolated func churnOther(_ n: Int) {
  for _ in 0..<n {
    let model = OtherModel()
    let target = OtherTarget()
    consume(Bind.inout(model, \.value).out(target, \.value).isActive ? 1 : 0)
  }
}
// Sets of a computed member's dependency, in a chain of this thread's own.
@inline(never) nonisolated func computedSets(_ n: Int) {
  let sum = Sum()
  let target = Target()
  let chain = Bind.in(sum, \.total).out(target, \.value)
  setRepeatedly(sum, n)
  consume(chain.memberCount + target.value)
}
// Runs `body(n)` on two threads at once.
nonisolated func onTwoThreads(
  _ n: Int, _ body: @escaping @Sendable (Int) -> Void,
  second: (@Sendable (Int) -> Void)? = nil
) {
  DispatchQueue.concurrentPerform(iterations: 2) { $0 == 1 ? (second ?? body)(n) : body(n) }
}
// Seconds `body` takes.
nonisolated func seconds(_ body: () -> Void) -> Double {
  let start = ContinuousClock.now
  body()
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}
// The process's CPU time (user and system, seconds) and voluntary context switches so far.
nonisolated func processUsage() -> (cpu: Double, waits: Int) {
  var usage = rusage()
  #if canImport(Glibc)
    getrusage(RUSAGE_SELF.rawValue, &usage)
  #else
    getrusage(RUSAGE_SELF, &usage)
  #endif
  let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
  let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
  return (user + system, usage.ru_nvcsw)
}
// Three rounds: `work` once on one thread, then on two at once. Prints two threads' throughput
// over one's in wall-clock time (2 would be perfect scaling; other processes on the machine
// lower it), CPU time per operation on two threads over one thread (1 would be perfect; less
// disturbed by other processes), and the voluntary context switches (a thread sleeping on a
// lock) per 1 000 operations on two threads.
nonisolated func scaling(_ n: Int) {
  // churnsplit: churn on one thread, then churn beside churnOther.
  let modes: [(String, @Sendable (Int) -> Void, (@Sendable (Int) -> Void)?)] = [
    ("churn", churn, nil), ("churnsplit", churn, churnOther),
    ("churnobservable", churnObservable, nil), ("computed", computedSets, nil),
  ]
  func rounded(_ value: Double) -> Double { Double(Int(value * 100)) / 100 }
  for round in 1...3 {
    for (name, work, second) in modes {
      let start = processUsage()
      let one = seconds { work(n) }
      let middle = processUsage()
      let two = seconds { onTwoThreads(n, work, second: second) }
      let end = processUsage()
      let cpuRatio = ((end.cpu - middle.cpu) / 2) / (middle.cpu - start.cpu)
      let waits = (end.waits - middle.waits) * 1_000 / (2 * n)
      print(
        "round \(round) \(name): one thread \(Int(one * 1e9) / n) ns/op, two threads",
        "\(Int(two * 1e9) / n) ns/op each: throughput \(rounded(2 * one / two)) ×,",
        "CPU per op \(rounded(cpuRatio)) ×, \(waits) waits per 1 000 ops")
    }
  }
}

// Every mode but mainactor binds from nonisolated code: chains bound from top-level code, which is
// main-actor code, are isolated to the main actor (Docs/Semantics.md, "Isolation").
nonisolated func profile(_ kind: String, _ n: Int) {
  let target = Target()
  switch kind {
  case "chainbind", "scale":
    // "scale": 100 000 unrelated live chains first.
    var others: [(Model, Target, Chain<Int>)] = []
    if kind == "scale" {
      for _ in 0..<100_000 {
        let m = Model()
        let t = Target()
        others.append((m, t, Bind.inout(m, \.value).out(t, \.value)))
      }
    }
    let model = Model()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    setRepeatedly(model, n)
    consume(chain.memberCount)
    consume(others.count)
  case "floor":
    let model = HandModel()
    observe(model, writingTo: target)
    setRepeatedly(model, n)
  case "floorstring":
    let model = HandModel()
    let text = TextTarget()
    observe(model, writingTextTo: text)
    setRepeatedly(model, n)
    consume(text.text.count)
  case "string":
    let model = Model()
    let text = TextTarget()
    let chain = Bind.inout(model, \.value).out(text, \.text)
    setRepeatedly(model, n)
    consume(chain.memberCount + text.text.count)
  case "stringback":
    let model = Model()
    let text = TextSource()
    let chain = Bind.inout(model, \.value).inout(text, \.text)
    setRepeatedly(text, (0..<10).map { String($0) }, n)
    consume(chain.memberCount + model.value)
  case "filter":
    let model = Model()
    let text = TextTarget()
    let chain = Bind.inout(model, \.value)
      .filter { $0 >= 0 }
      .out(text, \.text, convert: { String($0) })
    setRepeatedly(model, n)
    consume(chain.memberCount + text.text.count)
  case "batch":
    let model = Model()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    for _ in 0..<n / 100 { Bind.batch { setRepeatedly(model, 100) } }
    consume(chain.memberCount)
  case "values":
    let model = Model()
    let chain = Bind.inout(model, \.value)
    let iterator = chain.values.makeAsyncIterator()
    setRepeatedly(model, n)
    withExtendedLifetime(iterator) { consume(chain.memberCount) }
  case "valuesstream":
    let model = Model()
    let (stream, continuation) = AsyncStream.makeStream(
      of: Int.self, bufferingPolicy: .bufferingNewest(1))
    let chain = Bind.inout(model, \.value).out(key: "stream") { continuation.yield($0) }
    let iterator = stream.makeAsyncIterator()
    setRepeatedly(model, n)
    withExtendedLifetime(iterator) { consume(chain.memberCount) }
  case "traced":
    let model = Model()
    var events = 0
    let chain = Bind.inout(model, \.value).out(target, \.value).trace { _ in events &+= 1 }
    setRepeatedly(model, n)
    consume(chain.memberCount + events)
  case "sink":
    let model = Model()
    var total = 0
    let chain = Bind.inout(model, \.value).out(key: "sum") { total &+= $0 }
    setRepeatedly(model, n)
    consume(chain.memberCount + total)
  case "double":
    let model = Model()
    let number = NumberTarget()
    let chain = Bind.inout(model, \.value).out(number, \.number)
    setRepeatedly(model, n)
    consume(chain.memberCount + Int(number.number))
  case "twoway":
    let left = Model()
    let right = Model()
    let pair = Bind.inout(left, \.value).inout(right, \.value)
    setAlternately(left, right, n)
    consume(pair.memberCount + right.value)
  case "floortwoway":
    let left = HandModel()
    let right = HandModel()
    pair(left, right)
    setAlternately(left, right, n)
    consume(left.value + right.value)
  case "leantwoway":
    let left = LeanEnd()
    let right = LeanEnd()
    pair(left, right)
    setAlternately(left, right, n)
    consume(left.value + right.value)
  case "boundread":
    // The property is bound, as the sources of the other modes are.
    let model = Model()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    model.value = 1
    consume(readRepeatedly(model, n) + chain.memberCount)
  case "floorread":
    let model = PlainModel()
    model.value = 1
    consume(readRepeatedly(model, n))
  case "nested":
    let root = Root()
    let chain = Bind.in(root, \.mid.leaf.value).out(target, \.value)
    setRepeatedly(root.mid.leaf, n)
    consume(chain.memberCount)
  case "floornested":
    let root = HandRoot()
    observePath(root, writingTo: target)
    setRepeatedly(root.mid.leaf, n)
  case "relink":
    let root = Root()
    let mids = (Mid(), Mid())
    let chain = Bind.in(root, \.mid.leaf.value).out(target, \.value)
    relinkRepeatedly(root, mids, n)
    consume(chain.memberCount)
  case "floorrelink":
    let root = HandRoot()
    let mids = (HandMid(), HandMid())
    observePath(root, writingTo: target)
    relinkRepeatedly(root, mids, n)
  case "observable":
    let model = ObservedModel()
    let chain = Bind.in(model, \.value).out(target, \.value)
    setRepeatedly(model, n)
    consume(chain.memberCount)
  case "floorobservable":
    let model = ObservedModel()
    let link = ObservationLink(model) { [weak target] in target?.value = $0 }
    setRepeatedly(model, link, n)
  case "computed":
    let sum = Sum()
    let chain = Bind.in(sum, \.total).out(target, \.value)
    setRepeatedly(sum, n)
    consume(chain.memberCount)
  case "list1", "list10", "listshuffle":
    let (old, new) = listPair(edits: kind == "list1" ? 1 : kind == "list10" ? 10 : nil)
    for _ in 0..<n / 1_000 {
      consume(ListChange(from: old, to: new).moved.count)
    }
  case "listdk":
    let (old, new) = differenceKitPair()
    for _ in 0..<n / 1_000 {
      consume(ListChange(from: old, to: new).moved.count)
    }
  case "stepsdk":
    let (old, new) = differenceKitPair()
    for _ in 0..<n / 1_000 {
      consume(ListChange(from: old, to: new).steps.count)
    }
  case "differencedk":
    let (old, new) = differenceKitPair()
    for _ in 0..<n / 1_000 {
      consume(new.difference(from: old).count)
    }
  case "difference1", "difference10", "differenceshuffle":
    let (old, new) = listPair(
      edits: kind == "difference1" ? 1 : kind == "difference10" ? 10 : nil)
    for _ in 0..<n / 1_000 {
      consume(new.difference(from: old).count)
    }
  case "floorcomputed":
    let sum = HandSum()
    sum.observers.append { [weak target] in target?.value = $0 }
    setRepeatedly(sum, n)
  case "churn":
    churn(n)
    consume(Bind.activeChainCount)
  case "addmember":
    addMembers(n)
  case "churnobservable":
    churnObservable(n)
    consume(Bind.activeChainCount)
  case "churnnested":
    churnNested(n)
    consume(Bind.activeChainCount)
  case "churncomputed":
    churnComputed(n)
    consume(Bind.activeChainCount)
  case "churn2":
    onTwoThreads(n, churn)
    consume(Bind.activeChainCount)
  case "computed2":
    onTwoThreads(n, computedSets)
  case "scaling":
    scaling(n)
  case "memorynested", "objectsnested":
    var pairs: [(Holder, Target)] = []
    var chains: [Chain<Int>] = []
    pairs.reserveCapacity(n)
    chains.reserveCapacity(n)
    for _ in 0..<n { pairs.append((Holder(), Target())) }
    if kind == "memorynested" {
      for (h, t) in pairs { chains.append(Bind.in(h, \.leaf.value).out(t, \.value)) }
    }
    consume(pairs.count + chains.count)
    exit(0)
  case "memorycomputed", "objectscomputed":
    var pairs: [(Sum, Target)] = []
    var chains: [Chain<Int>] = []
    pairs.reserveCapacity(n)
    chains.reserveCapacity(n)
    for _ in 0..<n { pairs.append((Sum(), Target())) }
    if kind == "memorycomputed" {
      for (s, t) in pairs { chains.append(Bind.in(s, \.total).out(t, \.value)) }
    }
    consume(pairs.count + chains.count)
    exit(0)
  case "memoryobservable", "objectsobservable":
    var pairs: [(ObservedModel, Target)] = []
    var chains: [Chain<Int>] = []
    pairs.reserveCapacity(n)
    chains.reserveCapacity(n)
    for _ in 0..<n { pairs.append((ObservedModel(), Target())) }
    if kind == "memoryobservable" {
      for (m, t) in pairs { chains.append(Bind.inout(m, \.value).out(t, \.value)) }
    }
    consume(pairs.count + chains.count)
    exit(0)
  case "memory":
    // valgrind --leak-check=full --show-leak-kinds=reachable: allocation sites with N blocks
    // are per chain.
    var pairs: [(Model, Target)] = []
    var chains: [Chain<Int>] = []
    pairs.reserveCapacity(n)
    chains.reserveCapacity(n)
    for _ in 0..<n { pairs.append((Model(), Target())) }
    for (m, t) in pairs { chains.append(Bind.inout(m, \.value).out(t, \.value)) }
    consume(pairs.count + chains.count)
    exit(0)
  default:
    let modes = [
      "chainbind", "scale", "floor", "string", "stringback", "floorstring", "double", "filter",
      "sink", "twoway",
      "floortwoway", "leantwoway", "boundread", "floorread", "nested", "floornested", "relink",
      "floorrelink", "observable",
      "floorobservable", "computed", "floorcomputed", "memorynested", "objectsnested",
      "memorycomputed", "objectscomputed",
      "churn", "churnobservable", "churnnested", "churncomputed", "churn2", "computed2", "scaling",
      "memoryobservable", "objectsobservable", "memory", "mainactor", "list1", "list10",
      "listshuffle", "listdk", "stepsdk", "difference1", "difference10", "differenceshuffle",
      "differencedk", "traced", "batch", "values", "valuesstream", "soak", "contendedsinks",
      "contendedtwoway", "contendedmainactor", "contendedfloor",
    ]
    print("HotPathProfile: unknown mode \(kind); modes: \(modes.joined(separator: " "))")
    exit(2)
  }
  consume(target.value)
}

// `set → 1 out` N times in a chain isolated to the main actor, set on the main actor.
@MainActor func profileOnMainActor(_ n: Int) {
  let target = Target()
  let model = Model()
  let chain = Bind.inout(model, \.value).out(target, \.value)
  setRepeatedly(model, n)
  consume(chain.memberCount)
  consume(target.value)
}

let args = CommandLine.arguments
let kind = args.count > 1 ? args[1] : "chainbind"
let n = args.count > 2 ? Int(args[2]) ?? 100_000 : 100_000
if kind == "mainactor" {
  profileOnMainActor(n)
} else if kind == "contendedmainactor" {
  // The main queue runs the main actor's jobs; the producer runs beside it.
  Task { @MainActor in
    await contendedMainActor(milliseconds: args.count > 2 ? n : 3_000)
    exit(0)
  }
  dispatchMain()
} else if kind.hasPrefix("contended") {
  contended(kind, milliseconds: args.count > 2 ? n : 3_000)
} else if kind == "soak" {
  startSoak(uses: args.count > 2 ? n : 120_000, only: args.count > 3 ? args[3] : nil)
} else {
  profile(kind, n)
}
