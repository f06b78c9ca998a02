@_spi(Testing) import ChainBind
import Dispatch
import Testing

// Docs/Semantics.md, "Threading" and "Lifetime": the registry in shards. Chains bound on several
// threads, in several registries, keep codes unique in the process; a chain keeps working after
// the test registry it was bound in is gone.

/// The codes of the chains one thread bound, kept with the chains (a chain's number is never
/// reused while it lives).
///
/// Each slot is touched by one thread at a time: the thread that fills it, then, after
/// `concurrentPerform` returns, the one thread that reads it.
private final class CodeSlot: @unchecked Sendable {
  var chains: [Chain<Int>] = []
  var objects: [(Model, Plain)] = []
}

@Suite struct RegistryShardTests {
  @Test("chain codes are unique across threads and registries")
  func codesAreUniqueAcrossThreadsAndRegistries() {
    let registries = [ScopedRegistry(), ScopedRegistry()]
    let slots = [CodeSlot(), CodeSlot()]
    DispatchQueue.concurrentPerform(iterations: 2) { index in
      registries[index].withScope {
        for _ in 0..<500 {
          let model = Model()
          let plain = Plain()
          slots[index].chains.append(Bind.in(model, \.int).out(plain, \.int))
          slots[index].objects.append((model, plain))
        }
      }
    }
    // And in the process-wide registry.
    let model = Model()
    let plain = Plain()
    let shared = Bind.in(model, \.int).out(plain, \.int)
    let codes = Set(slots.flatMap { $0.chains.map(\.code) } + [shared.code])
    #expect(codes.count == 1_001)
    #expect(registries.map(\.activeChainCount) == [500, 500])
  }

  @Test("a chain outlives the test registry it was bound in")
  func chainOutlivesItsScopedRegistry() {
    let model = Model()
    let plain = Plain()
    var chain: Chain<Int>?
    do {
      let registry = ScopedRegistry()
      registry.withScope { chain = Bind.in(model, \.int).out(plain, \.int) }
    }
    model.int = 3
    #expect(plain.int == 3)
    // Unbinding works in the registry the chain was bound in, which the chain keeps.
    chain?.unbind()
    #expect(chain?.isActive == false)
    model.int = 4
    #expect(plain.int == 3)
  }
}
