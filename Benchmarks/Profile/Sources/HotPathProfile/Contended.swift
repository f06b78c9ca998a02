import ChainBind
import Dispatch
import Foundation
import MallocStats
import Synchronization

// Fair delivery under load (Docs/Semantics.md, "Fair delivery"): a producer thread sets a chain's
// source at full speed for N milliseconds while another thread, or the main actor, uses the same
// chain. Wall clock, not instructions: what is measured is how long the other side waits.
//   contendedsinks      another thread adds and removes a keyed sink in a loop
//   contendedtwoway     another thread sets the other end of a two-way `@Bound` pair
//   contendedmainactor  the chain is isolated to the main actor, where a 1 ms timer ticks
//   contendedfloor      two threads that share nothing: the machine's own worst call

final class ContendedModel: @unchecked Sendable {
  @Bound var value = 0
  @Bound var other = 0
}

final class ContendedLabel: @unchecked Sendable {
  var value = 0
}

private let contendedDeliveries = Atomic<Int>(0)

// A thread that sets `model.value` as fast as it can until stopped.
private final class Producer: Sendable {
  private let stopped = Atomic<Bool>(false)
  private let finished = DispatchSemaphore(value: 0)
  private let made = Atomic<Int>(0)

  init(_ model: ContendedModel) {
    Thread { [self] in
      var index = 0
      while !stopped.load(ordering: .relaxed) {
        index += 1
        model.value = index
      }
      made.store(index, ordering: .relaxed)
      finished.signal()
    }.start()
  }

  // Stops it; returns how many sets it made.
  func stop() -> Int {
    stopped.store(true, ordering: .relaxed)
    finished.wait()
    return made.load(ordering: .relaxed)
  }
}

private func nanoseconds(since start: DispatchTime) -> UInt64 {
  DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds
}

// Repeats `call` for `milliseconds`; returns the calls made and the worst call, in nanoseconds.
private func repeatedly(for milliseconds: Int, _ call: (Int) -> Void) -> (calls: Int, worst: UInt64)
{
  let start = DispatchTime.now()
  var calls = 0
  var worst: UInt64 = 0
  while nanoseconds(since: start) < UInt64(milliseconds) * 1_000_000 {
    calls += 1
    let before = DispatchTime.now()
    call(calls)
    worst = max(worst, nanoseconds(since: before))
  }
  return (calls, worst)
}

private func report(
  _ mode: String, milliseconds: Int, calls: Int, worst: UInt64, sets: Int, heapBefore: Int
) {
  let heap = Int(profile_heap_bytes_in_use()) - heapBefore
  print(
    "\(mode): \(milliseconds) ms: \(sets) sets, \(contendedDeliveries.load(ordering: .relaxed))",
    "deliveries; the other side: \(calls) calls, worst \(worst / 1_000) µs; heap \(heap) bytes")
}

nonisolated func contended(_ mode: String, milliseconds: Int) {
  let model = ContendedModel()
  let label = ContendedLabel()
  let heapBefore = Int(profile_heap_bytes_in_use())
  // What the other side does, on `model` (`produced` is the producer's model).
  let call: (Int) -> Void
  var produced = model
  // The chain, kept bound for the run.
  var kept: Any?
  switch mode {
  case "contendedsinks":
    let chain = Bind.inout(model, \.value).out(label, \.value)
      .out(key: "count") { _ in contendedDeliveries.add(1, ordering: .relaxed) }
    kept = chain
    call = { index in
      chain.out(key: "sink") { _ in }
      chain.removeOut(key: "sink")
      consume(index)
    }
  case "contendedtwoway":
    let chain = Bind.inout(model, \.value).inout(model, \.other)
      .out(key: "count") { _ in contendedDeliveries.add(1, ordering: .relaxed) }
    kept = chain
    call = { index in model.other = -index }
  case "contendedfloor":
    produced = ContendedModel()
    call = { index in model.other = index }
  default:
    preconditionFailure("not a contended mode: \(mode)")
  }
  let producer = Producer(produced)
  let (calls, worst) = repeatedly(for: milliseconds, call)
  let sets = producer.stop()
  withExtendedLifetime(kept) {}
  report(
    mode, milliseconds: milliseconds, calls: calls, worst: worst, sets: sets,
    heapBefore: heapBefore)
}

// The main-actor chain: the timer's worst lateness stands for the other side's worst wait.
@MainActor func contendedMainActor(milliseconds: Int) async {
  let model = ContendedModel()
  let label = ContendedLabel()
  let heapBefore = Int(profile_heap_bytes_in_use())
  let chain = Bind.inout(model, \.value).out(label, \.value)
    .out(key: "count") { _ in contendedDeliveries.add(1, ordering: .relaxed) }
  let producer = Producer(model)
  let start = DispatchTime.now()
  var ticks = 0
  var worst: UInt64 = 0
  while nanoseconds(since: start) < UInt64(milliseconds) * 1_000_000 {
    let before = DispatchTime.now()
    try? await Task.sleep(for: .milliseconds(1))
    worst = max(worst, nanoseconds(since: before) - min(nanoseconds(since: before), 1_000_000))
    ticks += 1
  }
  let sets = producer.stop()
  report(
    "contendedmainactor (timer ticks, lateness)", milliseconds: milliseconds, calls: ticks,
    worst: worst, sets: sets, heapBefore: heapBefore)
  consume(chain.memberCount)
}
