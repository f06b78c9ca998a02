@_spi(Testing) import ChainBind
import Testing

// Docs/Semantics.md, "Lifetime": chains hold members weakly and sinks strongly; @Bound properties
// and controls unbind themselves when their object dies; plain members are pruned lazily.

/// An object that only a closure keeps alive.
private final class Captured {
  var values: [Int] = []
}

@Suite struct LifetimeTests {
  @Suite struct Members {
    @Test(arguments: MemberKind.allCases)
    func chainDoesNotRetainItsMembersObject(kind: MemberKind) {
      let anchor = Model(string: "anchor")
      weak var weakObject: AnyObject?
      do {
        let object = bind(kind, to: anchor)
        weakObject = object
        #expect(Bind.inout(anchor, \.string).memberCount == 2)
      }
      #expect(weakObject == nil)
      Bind.unbind(anchor)
    }

    /// Binds a new object as `kind` into the chain of `anchor.string` and returns it.
    private func bind(_ kind: MemberKind, to anchor: Model) -> AnyObject {
      switch kind {
      case .head:
        let model = Model(string: "head")
        Bind.inout(model, \.string).inout(anchor, \.string)
        return model
      case .inoutMember:
        let model = Model()
        Bind.inout(anchor, \.string).inout(model, \.string)
        return model
      case .inMember:
        let model = Model()
        Bind.inout(anchor, \.string).in(model, \.string)
        return model
      case .outMember:
        let model = Model()
        Bind.inout(anchor, \.string).out(model, \.string)
        return model
      case .plainOutMember:
        let plain = Plain()
        Bind.inout(anchor, \.string).out(plain, \.string)
        return plain
      case .controlMember:
        let field = TextField()
        Bind.inout(anchor, \.string).inout(field, \.text, on: .editingChanged)
        return field
      case .controlOutMember:
        let field = TextField()
        Bind.inout(anchor, \.string).out(field, \.text)
        return field
      }
    }

    @Test func chainWithLiveSenderSurvivesTheDeathOfItsOutMembers() {
      withIsolatedRegistry {
        let model = Model()
        let survivor = Plain()
        let chain = Bind.inout(model, \.int).out(survivor, \.int)
        weak var weakPlain: Plain?
        weak var weakBoundOut: Model?
        do {
          let plain = Plain()
          let boundOut = Model()
          weakPlain = plain
          weakBoundOut = boundOut
          chain.out(plain, \.int).out(boundOut, \.int)
          #expect(chain.memberCount == 4)
        }
        #expect(weakPlain == nil)
        #expect(weakBoundOut == nil)
        #expect(chain.isActive)
        #expect(Bind.activeChainCount == 1)
        #expect(chain.memberCount == 2)
        model.int = 6
        #expect(survivor.int == 6)
        #expect(Bind.inout(model, \.int).code == chain.code)
      }
    }

    @Test func chainWithAnotherLiveSenderSurvivesTheDeathOfASender() {
      let head = Model()
      let plain = Plain()
      let chain = Bind.inout(head, \.int).out(plain, \.int)
      weak var weakSender: Model?
      do {
        let sender = Model()
        weakSender = sender
        chain.inout(sender, \.int)
        sender.int = 3
        #expect(head.int == 3)
      }
      #expect(weakSender == nil)
      #expect(chain.isActive)
      #expect(chain.memberCount == 2)
      head.int = 4
      #expect(plain.int == 4)
    }
  }

  @Suite struct Sinks {
    @Test func sinkIsRetainedWhileItsChainIsActive() {
      let model = Model()
      weak var weakCaptured: Captured?
      let chain: Chain<Int>
      do {
        let captured = Captured()
        weakCaptured = captured
        chain = Bind.inout(model, \.int).out(key: "capture") { captured.values.append($0) }
      }
      #expect(weakCaptured != nil)
      model.int = 4
      #expect(weakCaptured?.values == [0, 4])
      chain.unbind()
      #expect(weakCaptured == nil)
    }

    @Test(arguments: ClosureKind.allCases)
    func closuresAreReleasedWithTheirChainWhenTheLastSenderDies(kind: ClosureKind) {
      weak var weakCaptured: Captured?
      weak var weakModel: Model?
      do {
        let model = Model()
        let captured = Captured()
        weakModel = model
        weakCaptured = captured
        let chain = Bind.inout(model, \.int)
        switch kind {
        case .sink:
          chain.out(key: "capture") { captured.values.append($0) }
        case .filter:
          chain.filter { value in
            captured.values.append(value)
            return true
          }
        }
        model.int = 1
        #expect(captured.values.last == 1)
      }
      #expect(weakModel == nil)
      #expect(weakCaptured == nil)
    }
  }

  @Suite struct AutoUnbind {
    @Test func boundSenderDeathReleasesItsChainImmediately() throws {
      try withIsolatedRegistry {
        let start = Bind.activeChainCount
        let plain = Plain()
        var chain: Chain<Int>?
        weak var weakModel: Model?
        do {
          let model = Model()
          weakModel = model
          chain = Bind.inout(model, \.int).out(plain, \.int)
          #expect(Bind.activeChainCount == start + 1)
        }
        let released = try #require(chain)
        #expect(weakModel == nil)
        #expect(!released.isActive)
        #expect(Bind.activeChainCount == start)
      }
    }

    @Test func boundInHeadDeathReleasesItsChainImmediately() throws {
      try withIsolatedRegistry {
        let plain = Plain()
        var chain: Chain<Int>?
        do {
          let model = Model()
          chain = Bind.in(model, \.int).out(plain, \.int)
          model.int = 2
          #expect(plain.int == 2)
        }
        let released = try #require(chain)
        #expect(!released.isActive)
        #expect(Bind.activeChainCount == 0)
      }
    }

    @Test func boundMemberDeathRemovesItsMembershipBeforeAnyOtherOperation() {
      let head = Model()
      let plain = Plain()
      let chain = Bind.inout(head, \.int).out(plain, \.int)
      do {
        let member = Model()
        chain.inout(member, \.int)
        #expect(chain.attachedMemberCount == 3)
      }
      #expect(chain.attachedMemberCount == 2)
      #expect(chain.memberCount == 2)
      #expect(chain.isActive)
      head.int = 5
      #expect(plain.int == 5)
    }

    @Test func controlDeathReleasesAChainItAloneSendsTo() throws {
      try withIsolatedRegistry {
        let plain = Plain()
        var chain: Chain<String>?
        weak var weakField: TextField?
        do {
          let field = TextField()
          weakField = field
          chain = Bind.inout(field, \.text, on: .editingChanged).out(plain, \.string)
          field.userTypes("typed")
          #expect(plain.string == "typed")
          #expect(Bind.activeChainCount == 1)
        }
        let released = try #require(chain)
        #expect(weakField == nil)
        #expect(!released.isActive)
        #expect(Bind.activeChainCount == 0)
      }
    }

    @Test func controlMemberDeathRemovesItsMembershipImmediately() {
      let model = Model()
      let chain = Bind.inout(model, \.string)
      do {
        let field = TextField()
        chain.inout(field, \.text, on: .editingChanged)
        #expect(chain.attachedMemberCount == 2)
      }
      #expect(chain.attachedMemberCount == 1)
      #expect(chain.memberCount == 1)
      #expect(chain.isActive)
    }

    @Test func everySenderOfManyChainsDyingLeavesNoChainBehind() {
      withIsolatedRegistry {
        let plain = Plain()
        do {
          let model = Model()
          Bind.inout(model, \.int).out(plain, \.int)
          Bind.inout(model, \.string).out(plain, \.string)
          Bind.in(model, \.bool).out(plain, \.bool)
          #expect(Bind.activeChainCount == 3)
        }
        #expect(Bind.activeChainCount == 0)
      }
    }
  }

  /// Keeps a dead object's memory: no object made later gets its address.
  struct Zombie {
    unowned let object: Plain
    init(_ object: Plain) { self.object = object }
  }

  @Suite struct LazyPruning {
    @Test func deadPlainMemberIsNotCountedAndPropagationStillWorks() {
      let model = Model()
      let kept = Plain()
      let chain = Bind.inout(model, \.int).out(kept, \.int)
      weak var weakPlain: Plain?
      do {
        let plain = Plain()
        weakPlain = plain
        chain.out(plain, \.int)
        #expect(chain.memberCount == 3)
      }
      #expect(weakPlain == nil)
      #expect(chain.memberCount == 2)
      model.int = 8
      #expect(kept.int == 8)
      #expect(kept.intWrites == 1)
      #expect(chain.isActive)
    }

    @Test func deadPlainMemberIsPrunedByTheNextPropagation() {
      let model = Model()
      let kept = Plain()
      let chain = Bind.inout(model, \.int).out(kept, \.int)
      do {
        let plain = Plain()
        chain.out(plain, \.int)
      }
      model.int = 3
      #expect(kept.int == 3)
      #expect(chain.attachedMemberCount == 2)
    }

    // Adding looks for dead members of a large chain only when it has doubled since the last
    // look (so that adding n members is O(n) in all): the dead it holds stay bounded by the live,
    // also after unbinding most of them. The dead objects' memory is kept (`unowned`), so that no
    // new object takes a dead one's address, which would prune it at once; in a registry of
    // their own, whose sweeps see only this test's memberships.
    @Test(arguments: [0, 7, 100])
    func deadPlainMembersOfAChainMembersAreAddedToStayBounded(live: Int) {
      let registry = ScopedRegistry()
      registry.withScope {
        let model = Model()
        let chain = Bind.in(model, \.int)
        let unbound = (0..<300).map { _ in Plain() }
        for plain in unbound { chain.out(plain, \.int) }
        let kept = (0..<live).map { _ in Plain() }
        for plain in kept { chain.out(plain, \.int) }
        for plain in unbound { Bind.unbind(plain) }
        var zombies: [Zombie] = []
        var most = 0
        for _ in 0..<2_000 {
          do {
            let plain = Plain()
            zombies.append(Zombie(plain))
            chain.out(plain, \.int)
          }
          most = max(most, chain.attachedMemberCount)
        }
        #expect(most <= max(2 * (live + 1), 9) + 1)
        #expect(chain.memberCount == live + 1)
        model.int = 4
        #expect(kept.allSatisfy { $0.int == 4 })
        withExtendedLifetime(zombies) {}
      }
    }

    @Test func deadPlainMembersDoNotKeepAChainWithoutSendersAlive() throws {
      try withIsolatedRegistry {
        var chain: Chain<Int>?
        do {
          let model = Model()
          let plain = Plain()
          chain = Bind.inout(model, \.int).out(plain, \.int)
        }
        let released = try #require(chain)
        #expect(!released.isActive)
        #expect(released.memberCount == 0)
        #expect(Bind.activeChainCount == 0)
      }
    }
  }

  /// How an object takes part in the chain under test.
  enum MemberKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case head, inoutMember, inMember, outMember, plainOutMember, controlMember, controlOutMember

    var testDescription: String { rawValue }
  }

  /// What keeps a captured object alive.
  enum ClosureKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sink, filter

    var testDescription: String { rawValue }
  }
}

// A `@Bound` property's token reaches its membership only while it lasts: after an unbind,
// nothing the membership held (conversions, the chain's last value) keeps the object alive.
@Suite struct TokenLifetimeTests {
  private final class Formatted {
    @Bound var text = ""
    var prefix = "#"
  }

  private final class Field: ControlEventSource {
    enum Event { case editingChanged }
    let controlEvents = ControlEvents<Event>()
    var text = ""
    var prefix = "#"
  }

  private final class Owner {
    @Bound var selected: Item? = nil
  }

  private final class Item {
    let owner: Owner
    init(owner: Owner) { self.owner = owner }
  }

  @Test func anOutConversionCapturingItsOwnObjectIsFreedWhenTheChainEnds() {
    weak var weakFormatted: Formatted?
    withIsolatedRegistry {
      let formatted = Formatted()
      weakFormatted = formatted
      let model = Model(int: 1)
      let chain = Bind.inout(model, \.int)
        .out(formatted, \.text, convert: { "\(formatted.prefix)\($0)" })
      #expect(formatted.text == "#1")
      chain.unbind()
    }
    #expect(weakFormatted == nil)
  }

  @Test func aBackConversionCapturingItsOwnObjectIsFreedAfterUnbind() {
    weak var weakFormatted: Formatted?
    withIsolatedRegistry {
      let model = Model(int: 1)
      let formatted = Formatted()
      weakFormatted = formatted
      let chain = Bind.inout(model, \.int)
        .inout(
          formatted, \.text, convert: { "\($0)" },
          back: { Int($0.dropFirst(formatted.prefix.count)) })
      chain.unbind()
      withExtendedLifetime(model) {}
    }
    #expect(weakFormatted == nil)
  }

  @Test func aControlCapturedByItsBackConversionIsFreedAfterUnbind() {
    weak var weakField: Field?
    withIsolatedRegistry {
      let model = Model(int: 1)
      let field = Field()
      weakField = field
      let chain = Bind.inout(model, \.int)
        .inout(
          field, \.text, on: .editingChanged, convert: { "\($0)" },
          back: { Int($0.dropFirst(field.prefix.count)) })
      chain.unbind()
      withExtendedLifetime(model) {}
    }
    #expect(weakField == nil)
  }

  @Test func aLastValueReferringToItsObjectIsFreedAfterUnbind() {
    weak var weakOwner: Owner?
    withIsolatedRegistry {
      let owner = Owner()
      weakOwner = owner
      let chain = Bind.inout(owner, \.selected)
      owner.selected = Item(owner: owner)
      chain.unbind()
      owner.selected = nil
    }
    #expect(weakOwner == nil)
  }
}
