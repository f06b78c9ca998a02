import Benchmark
import ChainBind
import Dispatch
import OpenCombine

// Two threads at once, each with objects of its own: binding and releasing chains (churn), and
// sets into a computed member. Compare each "on two threads" benchmark with its "on one thread"
// peer of the same run: two threads doing twice the work in the same time scale perfectly (2 ×
// the throughput). Docs/Performance.md, "Threads".

/// A computed property over two `@Bound` properties, for the computed-member benchmarks.
final class BoundSum {
  @Bound var a = 0
  @Bound var b = 0
  var total: Int { a + b }
}

/// The `@Bound` path of the nested-path churn: holder.model.value.
final class BoundHolder {
  @Bound var model = BoundModel()
}

/// The OpenCombine peer of `BoundSum`: a subject per property, each sending the sum into a third
/// (OpenCombine 0.14 has no `combineLatest`); the sum's subscribers deduplicate it.
final class SubjectSum {
  let a = CurrentValueSubject<Int, Never>(0)
  let b = CurrentValueSubject<Int, Never>(0)
  let sum = CurrentValueSubject<Int, Never>(0)
  private var links: [AnyCancellable] = []

  init() {
    links.append(a.sink { [unowned self] in sum.send($0 + b.value) })
    links.append(b.sink { [unowned self] in sum.send(a.value + $0) })
  }

  var total: AnyPublisher<Int, Never> { sum.removeDuplicates().eraseToAnyPublisher() }
}

/// Runs `body` on one thread, or on two at once.
func onThreads(_ count: Int, _ body: @Sendable () -> Void) {
  if count == 1 {
    body()
  } else {
    DispatchQueue.concurrentPerform(iterations: count) { _ in body() }
  }
}

func twoThreadBenchmarks() {
  let cycles = 1_000
  for threads in [1, 2] {
    let on = threads == 1 ? "on one thread" : "on two threads"
    Benchmark(
      "threads: churn ×1 000 \(on), ChainBind",
      configuration: config(scaling: .one, iterations: 1_000, seconds: 3)
    ) { b in
      b.startMeasurement()
      onThreads(threads) {
        for _ in 0..<cycles {
          let model = BoundModel()
          let target = Target()
          blackHole(Bind.inout(model, \.value).out(target, \.value))
        }
      }
      b.stopMeasurement()
    }
    Benchmark(
      "threads: churn ×1 000 \(on), OpenCombine CurrentValueSubject + assign",
      configuration: config(scaling: .one, iterations: 1_000, seconds: 3)
    ) { b in
      b.startMeasurement()
      onThreads(threads) {
        for _ in 0..<cycles {
          let subject = CurrentValueSubject<Int, Never>(0)
          let target = Target()
          blackHole(subject.assign(to: \.value, on: target))
        }
      }
      b.stopMeasurement()
    }
    Benchmark(
      "threads: computed member, 1 000 sets \(on), ChainBind",
      configuration: config(scaling: .one, iterations: 1_000, seconds: 3)
    ) { b in
      b.startMeasurement()
      onThreads(threads) {
        let sum = BoundSum()
        let target = Target()
        let chain = Bind.in(sum, \.total).out(target, \.value)
        for i in 0..<cycles { sum.a = i }
        blackHole((chain, target))
      }
      b.stopMeasurement()
    }
    Benchmark(
      "threads: computed member, 1 000 sets \(on), OpenCombine subjects + assign",
      configuration: config(scaling: .one, iterations: 1_000, seconds: 3)
    ) { b in
      b.startMeasurement()
      onThreads(threads) {
        let sum = SubjectSum()
        let target = Target()
        let cancellable = sum.total.assign(to: \.value, on: target)
        for i in 0..<cycles { sum.a.send(i) }
        blackHole((cancellable, target))
      }
      b.stopMeasurement()
    }
  }
}
