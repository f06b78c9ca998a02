import Benchmark
import ChainBind
import Observation
import OpenCombine

// Scale: set → 1 out with 1 live chain versus 100 000 unrelated live chains.
// Churn: create and release N chains of 2 members (bind, then auto-unbind on release).
// Memory: bytes and allocations per live 2-member chain.

let unrelatedChainCount = 100_000

/// The unrelated chains of the scale scenario, built once per process and kept alive.
nonisolated(unsafe) var unrelatedChains: [(BoundModel, Target, Chain<Int>)] = []

func scaleBenchmarks() {
  Benchmark("scale: set → 1 out, ChainBind, 1 live chain", configuration: config()) { b in
    let model = BoundModel()
    let target = Target()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    measure(b, model) { m, i in m.value = i }
    blackHole((target, chain))
  }
  Benchmark("scale: set → 1 out, ChainBind, 100 000 live chains", configuration: config()) { b in
    if unrelatedChains.isEmpty {
      unrelatedChains.reserveCapacity(unrelatedChainCount)
      for _ in 0..<unrelatedChainCount - 1 {
        let model = BoundModel()
        let target = Target()
        unrelatedChains.append((model, target, Bind.inout(model, \.value).out(target, \.value)))
      }
    }
    let model = BoundModel()
    let target = Target()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    precondition(Bind.activeChainCount >= unrelatedChainCount)
    measure(b, model) { m, i in m.value = i }
    blackHole((target, chain))
  }
}

func churnBenchmarks() {
  // Each sample binds and releases `count` chains; run with `--scale` for ns per chain.
  for count in [1_000, 100_000] {
    let iterations = count == 1_000 ? 1_000 : 10
    let label = count == 1_000 ? "1 000" : "100 000"
    Benchmark(
      "churn ×\(label): floor (didSet + closures)",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      b.startMeasurement()
      for _ in 0..<count {
        let model = HandModel()
        let target = Target()
        model.observe { [weak target] in target?.value = $0 }
        blackHole(model)
      }
      b.stopMeasurement()
    }
    Benchmark(
      "churn ×\(label): ChainBind",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      let before = Bind.activeChainCount
      b.startMeasurement()
      for _ in 0..<count {
        let model = BoundModel()
        let target = Target()
        blackHole(Bind.inout(model, \.value).out(target, \.value))
      }
      b.stopMeasurement()
      precondition(Bind.activeChainCount == before, "auto-unbind left chains behind")
    }
    Benchmark(
      "churn ×\(label): ChainBind, @Observable source",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      let before = Bind.activeChainCount
      b.startMeasurement()
      for _ in 0..<count {
        let model = ObservedModel()
        let target = Target()
        blackHole(Bind.inout(model, \.value).out(target, \.value))
      }
      b.stopMeasurement()
      precondition(Bind.activeChainCount == before, "an @Observable source left chains behind")
    }
    Benchmark(
      "churn ×\(label): ChainBind, nested path",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      let before = Bind.activeChainCount
      b.startMeasurement()
      for _ in 0..<count {
        let holder = BoundHolder()
        let target = Target()
        blackHole(Bind.in(holder, \.model.value).out(target, \.value))
      }
      b.stopMeasurement()
      precondition(Bind.activeChainCount == before, "a nested path left chains behind")
    }
    Benchmark(
      "churn ×\(label): OpenCombine @Published + sink",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      b.startMeasurement()
      for _ in 0..<count {
        let model = PublishedModel()
        let target = Target()
        blackHole(model.$value.sink { [weak target] in target?.value = $0 })
      }
      b.stopMeasurement()
    }
    Benchmark(
      "churn ×\(label): OpenCombine CurrentValueSubject + assign",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      b.startMeasurement()
      for _ in 0..<count {
        let subject = CurrentValueSubject<Int, Never>(0)
        let target = Target()
        blackHole(subject.assign(to: \.value, on: target))
      }
      b.stopMeasurement()
    }
    Benchmark(
      "churn ×\(label): Observation re-armed",
      configuration: config(scaling: .one, iterations: iterations, seconds: 3)
    ) { b in
      b.startMeasurement()
      for _ in 0..<count {
        let model = ObservedModel()
        let target = Target()
        blackHole(ObservationLink(model) { [weak target] in target?.value = $0 })
      }
      b.stopMeasurement()
    }
  }
}

func memoryBenchmarks() {
  // Each sample binds 1 000 chains between objects made before the measurement, and measures
  // what the binding allocated while all 1 000 are alive. `--scale` gives the cost per chain.
  let count = 1_000
  let memoryConfig = config(memoryMetrics, iterations: 100)
  Benchmark("memory per live chain: floor (didSet + closures)", configuration: memoryConfig) { b in
    let models = (0..<count).map { _ in HandModel() }
    let targets = (0..<count).map { _ in Target() }
    b.startMeasurement()
    for i in 0..<count {
      models[i].observe { [weak target = targets[i]] in target?.value = $0 }
    }
    b.stopMeasurement()
    blackHole((models, targets))
  }
  Benchmark("memory per live chain: ChainBind", configuration: memoryConfig) { b in
    let models = (0..<count).map { _ in BoundModel() }
    let targets = (0..<count).map { _ in Target() }
    var chains: [Chain<Int>] = []
    chains.reserveCapacity(count)
    b.startMeasurement()
    for i in 0..<count {
      chains.append(Bind.inout(models[i], \.value).out(targets[i], \.value))
    }
    b.stopMeasurement()
    blackHole((models, targets, chains))
  }
  Benchmark("memory per live chain: OpenCombine @Published + sink", configuration: memoryConfig) {
    b in
    let models = (0..<count).map { _ in PublishedModel() }
    let targets = (0..<count).map { _ in Target() }
    var cs: [AnyCancellable] = []
    cs.reserveCapacity(count)
    b.startMeasurement()
    for i in 0..<count {
      cs.append(models[i].$value.sink { [weak target = targets[i]] in target?.value = $0 })
    }
    b.stopMeasurement()
    blackHole((models, targets, cs))
  }
  Benchmark(
    "memory per live chain: OpenCombine CurrentValueSubject + assign", configuration: memoryConfig
  ) { b in
    let subjects = (0..<count).map { _ in CurrentValueSubject<Int, Never>(0) }
    let targets = (0..<count).map { _ in Target() }
    var cs: [AnyCancellable] = []
    cs.reserveCapacity(count)
    b.startMeasurement()
    for i in 0..<count {
      cs.append(subjects[i].assign(to: \.value, on: targets[i]))
    }
    b.stopMeasurement()
    blackHole((subjects, targets, cs))
  }
  Benchmark("memory per live chain: Observation re-armed", configuration: memoryConfig) { b in
    let models = (0..<count).map { _ in ObservedModel() }
    let targets = (0..<count).map { _ in Target() }
    var links: [ObservationLink] = []
    links.reserveCapacity(count)
    b.startMeasurement()
    for i in 0..<count {
      links.append(ObservationLink(models[i]) { [weak target = targets[i]] in target?.value = $0 })
    }
    b.stopMeasurement()
    blackHole((models, targets, links))
  }
}
