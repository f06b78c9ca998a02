@_spi(Testing) import ChainBind
import Testing

// Docs/Architecture.md, "Finding the @Bound storage": a key path found to reach no @Bound storage
// is remembered, and later receiving members of it are added without reading it. These tests
// check that remembering changes nothing a user can see.

@Suite("Plain properties: found once, remembered")
struct PlainPropertyTests {
  @Test("receiving members of one plain key path on many objects are all synced and written")
  func manyPlainTargets() {
    let registry = ScopedRegistry()
    registry.withScope {
      let model = Model()
      model.int = 4
      let targets = (0..<3).map { _ in Plain() }
      let chain = Bind.inout(model, \.int)
      for target in targets { chain.out(target, \.int) }
      #expect(targets.map(\.int) == [4, 4, 4])
      model.int = 9
      #expect(targets.map(\.int) == [9, 9, 9])
      #expect(chain.memberCount == 4)
      chain.unbind()
    }
  }

  @Test("a @Bound property bound as a receiving member again still gets its token")
  func boundTargetsKeepTheirTokens() {
    let registry = ScopedRegistry()
    registry.withScope {
      let model = Model()
      let chain = Bind.inout(model, \.string)
      for round in 0..<3 {
        do {
          let target = Model()
          chain.out(target, \.string)
          #expect(chain.attachedMemberCount == 2, "round \(round)")
        }
        // The token ends the membership with its object, at once: no pruning needed.
        #expect(chain.attachedMemberCount == 1, "round \(round)")
      }
      chain.unbind()
    }
  }

  @Test("a plain property first bound as a receiving member is still probed when it must send")
  func plainPropertyAddedAsSender() {
    let registry = ScopedRegistry()
    registry.withScope {
      let model = Model()
      let plain = Plain()
      var errors: [BindingError] = []
      let chain = Bind.inout(model, \.string).onError { errors.append($0) }
      chain.out(Plain(), \.string)
      chain.inout(plain, \.string)
      #expect(errors.map(\.cause) == [.notObservable])
      model.string = "written"
      #expect(plain.string == "written")
      chain.unbind()
    }
  }
}
