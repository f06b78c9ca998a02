import Benchmark
import ChainBind
import Foundation
import Observation
import OpenCombine

// Every update benchmark runs 1 000 sets per sample (`scalingFactor: .kilo`); run with
// `--scale` to read ns and allocations per set. Setup happens before `startMeasurement()`.
// `CHAINBIND_BENCH_SMOKE=1` shortens every benchmark to a few samples (the smoke mode).

let isSmoke = ProcessInfo.processInfo.environment["CHAINBIND_BENCH_SMOKE"] != nil

let updateMetrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .mallocCountTotal]
let memoryMetrics: [BenchmarkMetric] = [.mallocCountTotal, .mallocBytesCount]

func config(
  _ metrics: [BenchmarkMetric] = updateMetrics, scaling: BenchmarkScalingFactor = .kilo,
  iterations: Int = 10_000, seconds: Int = 1
) -> Benchmark.Configuration {
  .init(
    metrics: metrics,
    warmupIterations: isSmoke ? 1 : 3,
    scalingFactor: scaling,
    maxDuration: isSmoke ? .milliseconds(40) : .seconds(seconds),
    maxIterations: isSmoke ? min(iterations, 5) : iterations
  )
}

/// Times `body(state, i)` for each of the benchmark's scaled iterations.
@inline(__always)
func measure<State>(_ benchmark: Benchmark, _ state: State, _ body: (State, Int) -> Void) {
  benchmark.startMeasurement()
  for i in benchmark.scaledIterations { body(state, i) }
  benchmark.stopMeasurement()
  blackHole(state)
}

let benchmarks: @Sendable () -> Void = {
  updateBenchmarks()
  scaleBenchmarks()
  churnBenchmarks()
  twoThreadBenchmarks()
  memoryBenchmarks()
}
