import Benchmark
import ChainBind
import Observation
import OpenCombine
import Synchronization

// set → 1 out, set → 8 outs, Int → String, two-way pair, filter + convert; and read, the cost of
// reading a source property (no chain delivers anything).

func updateBenchmarks() {
  setOneOut()
  setEightOuts()
  setConverted()
  twoWay()
  filterConvert()
  read()
}

private func setOneOut() {
  Benchmark("set → 1 out: floor (didSet + closures)", configuration: config()) { b in
    let model = HandModel()
    let target = Target()
    model.observe { [weak target] in target?.value = $0 }
    measure(b, model) { m, i in m.value = i }
    blackHole(target)
  }
  Benchmark("set → 1 out: ChainBind", configuration: config()) { b in
    let model = BoundModel()
    let target = Target()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    measure(b, model) { m, i in m.value = i }
    blackHole((target, chain))
  }
  // The same chain built in main-actor code, so isolated to the main actor, and set there. Here
  // the main actor runs on the main queue's worker thread (the runner calls `dispatchMain()`), so
  // each set asks the main queue: the dearer of the two ways ChainBind recognises the main actor.
  Benchmark("set → 1 out: ChainBind, main-actor chain", configuration: config()) { b in
    nonisolated(unsafe) let benchmark = b
    await MainActor.run {
      let model = BoundModel()
      let target = Target()
      let chain = Bind.inout(model, \.value).out(target, \.value)
      measure(benchmark, model) { m, i in m.value = i }
      blackHole((target, chain))
    }
  }
  Benchmark("set → 1 out: OpenCombine @Published + sink", configuration: config()) { b in
    let model = PublishedModel()
    let target = Target()
    let c = model.$value.sink { [weak target] in target?.value = $0 }
    measure(b, model) { m, i in m.value = i }
    blackHole((target, c))
  }
  Benchmark("set → 1 out: OpenCombine CurrentValueSubject + assign", configuration: config()) { b in
    let subject = CurrentValueSubject<Int, Never>(0)
    let target = Target()
    let c = subject.assign(to: \.value, on: target)
    measure(b, subject) { s, i in s.send(i) }
    blackHole((target, c))
  }
  Benchmark("set → 1 out: Observation re-armed", configuration: config()) { b in
    let model = ObservedModel()
    let target = Target()
    let link = ObservationLink(model) { [weak target] in target?.value = $0 }
    measure(b, (model, link)) { s, i in
      s.0.value = i
      s.1.pump()
    }
    blackHole(target)
  }
}

private func setEightOuts() {
  Benchmark("set → 8 outs: floor (didSet + closures)", configuration: config()) { b in
    let model = HandModel()
    let targets = (0..<8).map { _ in Target() }
    for target in targets { model.observe { [weak target] in target?.value = $0 } }
    measure(b, model) { m, i in m.value = i }
    blackHole(targets)
  }
  Benchmark("set → 8 outs: ChainBind", configuration: config()) { b in
    let model = BoundModel()
    let targets = (0..<8).map { _ in Target() }
    var chain = Bind.inout(model, \.value)
    for target in targets { chain = chain.out(target, \.value) }
    measure(b, model) { m, i in m.value = i }
    blackHole((targets, chain))
  }
  Benchmark("set → 8 outs: OpenCombine @Published + sink", configuration: config()) { b in
    let model = PublishedModel()
    let targets = (0..<8).map { _ in Target() }
    let cs = targets.map { target in model.$value.sink { [weak target] in target?.value = $0 } }
    measure(b, model) { m, i in m.value = i }
    blackHole((targets, cs))
  }
  Benchmark("set → 8 outs: OpenCombine CurrentValueSubject + assign", configuration: config()) {
    b in
    let subject = CurrentValueSubject<Int, Never>(0)
    let targets = (0..<8).map { _ in Target() }
    let cs = targets.map { subject.assign(to: \.value, on: $0) }
    measure(b, subject) { s, i in s.send(i) }
    blackHole((targets, cs))
  }
  Benchmark("set → 8 outs: Observation re-armed", configuration: config()) { b in
    let model = ObservedModel()
    let targets = (0..<8).map { _ in Target() }
    let links = targets.map { target in
      ObservationLink(model) { [weak target] in target?.value = $0 }
    }
    measure(b, (model, links)) { s, i in
      s.0.value = i
      for link in s.1 { link.pump() }
    }
    blackHole(targets)
  }
}

private func setConverted() {
  // Int → String: small decimal strings fit in Swift's small-string form, so a converting
  // write needs no heap buffer of its own.
  Benchmark("set → 1 out Int→String: floor (didSet + closures)", configuration: config()) { b in
    let model = HandModel()
    let target = Target()
    model.observe { [weak target] in target?.text = String($0) }
    measure(b, model) { m, i in m.value = i }
    blackHole(target)
  }
  Benchmark("set → 1 out Int→String: ChainBind", configuration: config()) { b in
    let model = BoundModel()
    let target = Target()
    let chain = Bind.inout(model, \.value).out(target, \.text)
    measure(b, model) { m, i in m.value = i }
    blackHole((target, chain))
  }
  Benchmark("set → 1 out Int→String: OpenCombine @Published + sink", configuration: config()) { b in
    let model = PublishedModel()
    let target = Target()
    let c = model.$value.map { String($0) }.sink { [weak target] in target?.text = $0 }
    measure(b, model) { m, i in m.value = i }
    blackHole((target, c))
  }
  Benchmark(
    "set → 1 out Int→String: OpenCombine CurrentValueSubject + assign", configuration: config()
  ) { b in
    let subject = CurrentValueSubject<Int, Never>(0)
    let target = Target()
    let c = subject.map { String($0) }.assign(to: \.text, on: target)
    measure(b, subject) { s, i in s.send(i) }
    blackHole((target, c))
  }
  Benchmark("set → 1 out Int→String: Observation re-armed", configuration: config()) { b in
    let model = ObservedModel()
    let target = Target()
    let link = ObservationLink(model) { [weak target] in target?.text = String($0) }
    measure(b, (model, link)) { s, i in
      s.0.value = i
      s.1.pump()
    }
    blackHole(target)
  }
}

private func twoWay() {
  // One operation is one set; sets alternate between the two ends.
  Benchmark("two-way pair: floor (didSet + closures)", configuration: config()) { b in
    let left = HandModel()
    let right = HandModel()
    let echo = EchoGuard()
    left.observe { [weak right, echo] v in
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
    measure(b, (left, right)) { s, i in
      if i & 1 == 0 { s.0.value = i } else { s.1.value = i }
    }
  }
  Benchmark("two-way pair: ChainBind", configuration: config()) { b in
    let left = BoundModel()
    let right = BoundModel()
    let chain = Bind.inout(left, \.value).inout(right, \.value)
    measure(b, (left, right)) { s, i in
      if i & 1 == 0 { s.0.value = i } else { s.1.value = i }
    }
    blackHole(chain)
  }
  Benchmark("two-way pair: OpenCombine @Published + sink", configuration: config()) { b in
    let left = PublishedModel()
    let right = PublishedModel()
    let echo = EchoGuard()
    let c1 = left.$value.sink { [weak right, echo] v in
      guard !echo.isForwarding else { return }
      echo.isForwarding = true
      right?.value = v
      echo.isForwarding = false
    }
    let c2 = right.$value.dropFirst().sink { [weak left, echo] v in
      guard !echo.isForwarding else { return }
      echo.isForwarding = true
      left?.value = v
      echo.isForwarding = false
    }
    measure(b, (left, right)) { s, i in
      if i & 1 == 0 { s.0.value = i } else { s.1.value = i }
    }
    blackHole((c1, c2))
  }
  Benchmark("two-way pair: OpenCombine CurrentValueSubject + sink", configuration: config()) { b in
    let left = CurrentValueSubject<Int, Never>(0)
    let right = CurrentValueSubject<Int, Never>(0)
    let echo = EchoGuard()
    let c1 = left.sink { [weak right, echo] v in
      guard !echo.isForwarding else { return }
      echo.isForwarding = true
      right?.send(v)
      echo.isForwarding = false
    }
    let c2 = right.dropFirst().sink { [weak left, echo] v in
      guard !echo.isForwarding else { return }
      echo.isForwarding = true
      left?.send(v)
      echo.isForwarding = false
    }
    measure(b, (left, right)) { s, i in
      if i & 1 == 0 { s.0.send(i) } else { s.1.send(i) }
    }
    blackHole((c1, c2))
  }
  Benchmark("two-way pair: Observation re-armed", configuration: config()) { b in
    let left = ObservedModel()
    let right = ObservedModel()
    // Each side writes the other only when it differs: the equality check is the echo guard.
    let toRight = ObservationLink(left) { [weak right] v in
      if right?.value != v { right?.value = v }
    }
    let toLeft = ObservationLink(right) { [weak left] v in if left?.value != v { left?.value = v } }
    measure(b, (left, right, toRight, toLeft)) { s, i in
      if i & 1 == 0 { s.0.value = i } else { s.1.value = i }
      s.2.pump()
      s.3.pump()
      s.2.pump()
    }
  }
}

private func filterConvert() {
  // A filter that passes (v >= 0), then Int → String into the target.
  Benchmark("filter + convert: floor (didSet + closures)", configuration: config()) { b in
    let model = HandModel()
    let target = Target()
    model.observe { [weak target] v in
      guard v >= 0 else { return }
      target?.text = String(v)
    }
    measure(b, model) { m, i in m.value = i }
    blackHole(target)
  }
  Benchmark("filter + convert: ChainBind", configuration: config()) { b in
    let model = BoundModel()
    let target = Target()
    let chain = Bind.inout(model, \.value)
      .filter { $0 >= 0 }
      .out(target, \.text, convert: { String($0) })
    measure(b, model) { m, i in m.value = i }
    blackHole((target, chain))
  }
  Benchmark("filter + convert: OpenCombine @Published + sink", configuration: config()) { b in
    let model = PublishedModel()
    let target = Target()
    let c = model.$value.filter { $0 >= 0 }.map { String($0) }
      .sink { [weak target] in target?.text = $0 }
    measure(b, model) { m, i in m.value = i }
    blackHole((target, c))
  }
  Benchmark("filter + convert: OpenCombine CurrentValueSubject + assign", configuration: config()) {
    b in
    let subject = CurrentValueSubject<Int, Never>(0)
    let target = Target()
    let c = subject.filter { $0 >= 0 }.map { String($0) }.assign(to: \.text, on: target)
    measure(b, subject) { s, i in s.send(i) }
    blackHole((target, c))
  }
  Benchmark("filter + convert: Observation re-armed", configuration: config()) { b in
    let model = ObservedModel()
    let target = Target()
    let link = ObservationLink(model) { [weak target] v in
      guard v >= 0 else { return }
      target?.text = String(v)
    }
    measure(b, (model, link)) { s, i in
      s.0.value = i
      s.1.pump()
    }
    blackHole(target)
  }
}

private func read() {
  // One operation is one read of the model's `Int`, added to a sum. Summing alone would let the
  // optimizer read a plain property once for the whole loop; an acquiring fence before each read
  // (a compiler barrier on x86, no instruction) forbids that, for every peer alike.
  Benchmark("read: floor (plain stored property)", configuration: config()) { b in
    let model = HandModel()
    var sum = 0
    measure(b, model) { m, _ in
      atomicMemoryFence(ordering: .acquiring)
      sum &+= m.value
    }
    blackHole(sum)
  }
  Benchmark("read: ChainBind", configuration: config()) { b in
    // Bound, as the sources of the update scenarios are.
    let model = BoundModel()
    let target = Target()
    let chain = Bind.inout(model, \.value).out(target, \.value)
    var sum = 0
    measure(b, model) { m, _ in
      atomicMemoryFence(ordering: .acquiring)
      sum &+= m.value
    }
    blackHole((sum, target, chain))
  }
  Benchmark("read: OpenCombine @Published", configuration: config()) { b in
    let model = PublishedModel()
    let target = Target()
    let c = model.$value.sink { [weak target] in target?.value = $0 }
    var sum = 0
    measure(b, model) { m, _ in
      atomicMemoryFence(ordering: .acquiring)
      sum &+= m.value
    }
    blackHole((sum, target, c))
  }
  Benchmark("read: OpenCombine CurrentValueSubject", configuration: config()) { b in
    let subject = CurrentValueSubject<Int, Never>(0)
    let target = Target()
    let c = subject.assign(to: \.value, on: target)
    var sum = 0
    measure(b, subject) { s, _ in
      atomicMemoryFence(ordering: .acquiring)
      sum &+= s.value
    }
    blackHole((sum, target, c))
  }
  Benchmark("read: Observation", configuration: config()) { b in
    // Outside any tracking, as a read by ordinary code is; the model is observed.
    let model = ObservedModel()
    let target = Target()
    let link = ObservationLink(model) { [weak target] in target?.value = $0 }
    var sum = 0
    measure(b, model) { m, _ in
      atomicMemoryFence(ordering: .acquiring)
      sum &+= m.value
    }
    blackHole((sum, target, link))
  }
}
