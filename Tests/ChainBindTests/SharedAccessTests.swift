@_spi(Testing) import ChainBind
import Testing

// Members added at one call site share their key path and closures when nothing of the caller's
// went into them (Docs/Architecture.md, "Memory"): what is shared must still write each member
// the way its own call asked for.

/// One call site for every chain type: the automatic conversion into a `String`.
private func show<Value: BindConvertible>(_ chain: Chain<Value>, on plain: Plain) {
  chain.out(plain, \.string)
}

/// One call site, negated or not.
private func light(_ chain: Chain<Bool>, _ plain: Plain, negated: Bool) {
  chain.out(plain, \.bool, negated: negated)
}

/// One call site whose conversion captures `factor`.
private func scaled(_ chain: Chain<Int>, _ plain: Plain, by factor: Int) {
  chain.out(plain, \.string, convert: { "\($0 * factor)" })
}

@Suite("Members added at one call site share their access")
struct SharedAccessTests {
  @Test("one access per call site, however many members are added there")
  func oneAccessPerSite() {
    let registry = ScopedRegistry()
    let models = (0..<100).map { _ in Model() }
    let plains = (0..<100).map { _ in Plain() }
    let chains = registry.withScope {
      zip(models, plains).map { model, plain in Bind.inout(model, \.int).out(plain, \.int) }
    }
    // One for each of the two call sites in each shard of the registry, at most.
    #expect(registry.sharedAccessCount <= 2 * ScopedRegistry.shardCount)
    for (index, model) in models.enumerated() { model.int = index + 1 }
    let values = plains.map(\.int)
    #expect(values == Array(1...100))
    #expect(chains.allSatisfy { $0.isActive })
  }

  @Test("one call site in chains of several types: each converts from its own type")
  func oneSiteSeveralTypes() {
    let registry = ScopedRegistry()
    let model = Model()
    let (int, double, bool) = (Plain(), Plain(), Plain())
    registry.withScope {
      show(Bind.inout(model, \.int), on: int)
      show(Bind.inout(model, \.double), on: double)
      show(Bind.inout(model, \.bool), on: bool)
    }
    model.int = 7
    model.double = 0.5
    model.bool = true
    #expect([int.string, double.string, bool.string] == ["7", "0.5", "true"])
    // The three heads, and one access for each chain type at `show`'s call site.
    #expect(registry.sharedAccessCount == 6)
  }

  @Test("one call site, negated and not: each member as asked")
  func negatedAtOneSite() {
    let registry = ScopedRegistry()
    let model = Model()
    let (negated, plain) = (Plain(), Plain())
    registry.withScope {
      let chain = Bind.inout(model, \.bool)
      light(chain, negated, negated: true)
      light(chain, plain, negated: false)
    }
    model.bool = true
    #expect(negated.bool == false)
    #expect(plain.bool == true)
    model.bool = false
    #expect(negated.bool == true)
    #expect(plain.bool == false)
  }

  @Test("the caller's own conversions are never shared")
  func callersClosuresNotShared() {
    let registry = ScopedRegistry()
    let model = Model()
    let plains = (1...3).map { _ in Plain() }
    registry.withScope {
      let chain = Bind.inout(model, \.int)
      for (factor, plain) in zip(1..., plains) { scaled(chain, plain, by: factor) }
    }
    model.int = 5
    let strings = plains.map(\.string)
    #expect(strings == ["5", "10", "15"])
    // The head's only.
    #expect(registry.sharedAccessCount == 1)
  }

  @Test("members that share an access keep their own names in errors")
  func namesWhenShared() {
    let log = ErrorLog()
    let registry = ScopedRegistry()
    let model = Model()
    let targets = (0..<2).map { _ in Model() }
    registry.withScope {
      let chain = Bind.inout(model, \.string).onError(log.handler)
      for target in targets { chain.out(target, \.int) }
    }
    model.string = "x"
    // Each member's initial sync and the change fail to convert.
    #expect(log.errors.count == 4)
    let members = log.errors.map(\.member)
    #expect(members == Array(repeating: "Model.int", count: 4), "\(members)")
  }
}
