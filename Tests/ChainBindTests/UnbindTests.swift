@_spi(Testing) import ChainBind
import Testing

// Docs/Semantics.md, "Lifetime": unbinding an object, one property or a whole chain.

/// An object that only a closure keeps alive.
private final class Token {}

/// A subscript argument that counts how often it is compared.
private struct Cell: Hashable {
  let index: Int
  let comparisons: LockedBox<Int>

  static func == (lhs: Cell, rhs: Cell) -> Bool {
    lhs.comparisons.withLock { $0 += 1 }
    return lhs.index == rhs.index
  }

  func hash(into hasher: inout Hasher) { hasher.combine(index) }
}

/// A model bound through a key path per cell.
private final class Grid {
  var cells: [Int]
  init(count: Int) { cells = Array(repeating: 0, count: count) }
  subscript(cell: Cell) -> Int {
    get { cells[cell.index] }
    set { cells[cell.index] = newValue }
  }
}

@Suite struct UnbindTests {
  @Suite struct Objects {
    @Test func unbindingAnObjectRemovesEveryMembershipInEveryChain() {
      let intSource = Model()
      let stringSource = Model()
      let target = Model()
      let intChain = Bind.inout(intSource, \.int).out(target, \.int)
      let stringChain = Bind.inout(stringSource, \.string).inout(target, \.string)
      let doubleChain = Bind.inout(intSource, \.double).in(target, \.double)
      #expect(intChain.memberCount == 2)

      Bind.unbind(target)

      #expect(intChain.memberCount == 1)
      #expect(stringChain.memberCount == 1)
      #expect(doubleChain.memberCount == 1)
      intSource.int = 5
      stringSource.string = "x"
      #expect(target.int == 0)
      #expect(target.string == "")
      #expect(target.intSets == 0)
      #expect(target.stringSets == 0)
      target.string = "from target"
      target.double = 2
      #expect(stringSource.string == "x")
      #expect(intSource.double == 0)
    }

    @Test func unbindingAnObjectKeepsTheOtherMembersOfItsChains() {
      let source = Model()
      let target = Model()
      let other = Plain()
      let chain = Bind.inout(source, \.int).out(target, \.int).out(other, \.int)
      Bind.unbind(target)
      source.int = 3
      #expect(other.int == 3)
      #expect(target.int == 0)
      #expect(chain.isActive)
    }

    // Finding one membership of an object compares key paths: past a few of the object's
    // memberships, by hash first, so that the work stays flat however many it has (1 000
    // subscript arguments compared at each before).
    @Test(arguments: [10, 100, 1_000])
    func findingOneMembershipOfAnObjectBoundManyTimesComparesAFew(cells: Int) {
      let comparisons = LockedBox(0)
      let grid = Grid(count: cells)
      let models = (0..<cells).map { Model(int: $0 + 1) }
      let chains = models.enumerated().map { index, model in
        Bind.inout(model, \.int).out(grid, \.[Cell(index: index, comparisons: comparisons)])
      }
      #expect(grid.cells.last == cells)
      for last in [cells - 1, 0] {
        comparisons.withLock { $0 = 0 }
        Bind.unbind(grid, \.[Cell(index: last, comparisons: comparisons)])
        #expect(comparisons.withLock { $0 } <= 16)
        #expect(chains[last].memberCount == 1)
      }
      models[1].int = 42
      #expect(grid.cells[1] == 42)
      #expect(chains.dropFirst().dropLast().allSatisfy { $0.memberCount == 2 })
    }

    @Test func unbindingOneKeyPathRemovesExactlyThatMembership() {
      let source = Model()
      let target = Model()
      let chain = Bind.inout(source, \.int).out(target, \.int).out(target, \.double)
      let stringChain = Bind.inout(source, \.string).out(target, \.string)

      Bind.unbind(target, \.int)

      #expect(chain.memberCount == 2)
      #expect(stringChain.memberCount == 2)
      source.int = 4
      source.string = "s"
      #expect(target.int == 0)
      #expect(target.intSets == 0)
      #expect(target.double == 4)
      #expect(target.string == "s")
    }
  }

  @Suite struct WholeChain {
    @Test(arguments: ChainRelease.allCases)
    func releasingAChainDisconnectsEveryMember(way: ChainRelease) {
      withIsolatedRegistry {
        let start = Bind.activeChainCount
        let head = Model()
        let member = Model()
        let plain = Plain()
        var sinkCalls = 0
        let chain = Bind.inout(head, \.int).inout(member, \.int).out(plain, \.int)
          .out(key: "count") { _ in sinkCalls += 1 }
        head.int = 1
        #expect(Bind.activeChainCount == start + 1)
        #expect(plain.intWrites == 1)
        #expect(sinkCalls == 2)

        way.release(chain)

        #expect(!chain.isActive)
        #expect(Bind.activeChainCount == start)
        #expect(chain.memberCount == 0)
        head.int = 9
        member.int = 7
        #expect(plain.intWrites == 1)
        #expect(plain.int == 1)
        #expect(member.intSets == 2)
        #expect(head.int == 9)
        #expect(head.intSets == 2)
        #expect(sinkCalls == 2)
      }
    }

    @Test(arguments: ChainRelease.allCases)
    func releasingAChainReleasesItsSinksAndFilters(way: ChainRelease) {
      let model = Model()
      weak var weakSinkToken: Token?
      weak var weakFilterToken: Token?
      let chain: Chain<Int>
      do {
        let sinkToken = Token()
        let filterToken = Token()
        weakSinkToken = sinkToken
        weakFilterToken = filterToken
        chain = Bind.inout(model, \.int)
          .out(key: "sink") { _ in withExtendedLifetime(sinkToken) {} }
          .filter { _ in withExtendedLifetime(filterToken) { true } }
      }
      #expect(weakSinkToken != nil)
      #expect(weakFilterToken != nil)
      way.release(chain)
      #expect(weakSinkToken == nil)
      #expect(weakFilterToken == nil)
    }

    @Test func everyHandleOfAChainSeesItReleased() {
      let model = Model()
      let first = Bind.inout(model, \.int)
      let joined = Bind.inout(model, \.int)
      #expect(first.code == joined.code)
      Bind.unbind(first.code)
      #expect(!first.isActive)
      #expect(!joined.isActive)
    }
  }

  @Suite struct Harmless {
    @Test func unbindingWhatIsNotBoundChangesNothing() {
      withIsolatedRegistry {
        let source = Model()
        let plain = Plain()
        let chain = Bind.inout(source, \.int).out(plain, \.int)
        let released = Bind.inout(Model(), \.string)
        released.unbind()
        let start = Bind.activeChainCount

        Bind.unbind(Plain())
        Bind.unbind(Model(), \.int)
        Bind.unbind(source, \.string)
        Bind.unbind(plain, \.string)
        Bind.unbind(released.code)
        released.unbind()

        #expect(Bind.activeChainCount == start)
        #expect(chain.isActive)
        #expect(chain.memberCount == 2)
        source.int = 2
        #expect(plain.int == 2)
      }
    }

    @Test func unbindingTwiceIsHarmless() {
      withIsolatedRegistry {
        let source = Model()
        let target = Model()
        let chain = Bind.inout(source, \.int).out(target, \.int)
        Bind.unbind(target)
        Bind.unbind(target)
        Bind.unbind(target, \.int)
        #expect(chain.isActive)
        #expect(chain.memberCount == 1)
        chain.unbind()
        chain.unbind()
        Bind.unbind(chain.code)
        #expect(Bind.activeChainCount == 0)
      }
    }
  }

  @Suite struct Rebinding {
    @Test(arguments: SenderRemoval.allCases)
    func propertyCanBeBoundAgainAfterUnbind(way: SenderRemoval) {
      let model = Model()
      let oldTarget = Plain()
      let newTarget = Plain()
      let old = Bind.inout(model, \.int).out(oldTarget, \.int)
      way.remove(model, from: old)

      let new = Bind.inout(model, \.int).out(newTarget, \.int)
      model.int = 3

      #expect(new.isActive)
      #expect(new.code != old.code)
      #expect(newTarget.int == 3)
      #expect(oldTarget.intWrites == 0)
      #expect(new.memberCount == 2)
    }

    @Test func unboundMemberCanJoinAnotherChain() {
      let first = Model()
      let second = Model(int: 5)
      let target = Plain()
      Bind.inout(first, \.int).out(target, \.int)
      Bind.unbind(target, \.int)
      let chain = Bind.inout(second, \.int).out(target, \.int)
      first.int = 1
      #expect(target.int == 5)
      second.int = 6
      #expect(target.int == 6)
      #expect(chain.memberCount == 2)
    }
  }

  @Suite struct AddingToUnboundChain {
    @Test(arguments: LateAddition.allCases)
    func addingToAnUnboundChainReportsChainInactiveAndBindsNothing(addition: LateAddition) {
      withIsolatedRegistry {
        let model = Model(int: 4)
        let log = ErrorLog()
        let chain = Bind.inout(model, \.int).onError(log.handler)
        chain.unbind()

        let plain = Plain()
        let member = Model()
        var sinkCalls = 0
        var filterCalls = 0
        switch addition {
        case .outMember: chain.out(plain, \.int)
        case .inoutMember: chain.inout(member, \.int)
        case .inMember: chain.in(member, \.int)
        case .sink: chain.out(key: "late") { _ in sinkCalls += 1 }
        case .filter:
          chain.filter { _ in
            filterCalls += 1
            return true
          }
        }

        #expect(log.errors.map(\.cause) == [.chainInactive])
        #expect(log.errors.first?.chain == chain.code)
        #expect(!chain.isActive)
        #expect(chain.memberCount == 0)
        #expect(Bind.activeChainCount == 0)
        #expect(plain.intWrites == 0)
        #expect(member.int == 0)
        #expect(sinkCalls == 0)
        member.int = 8
        model.int = 9
        #expect(plain.intWrites == 0)
        #expect(filterCalls == 0)
        #expect(sinkCalls == 0)
      }
    }
  }

  @Suite struct SendingMembers {
    @Test(arguments: SenderRemoval.allCases)
    func chainLeftWithoutASendingMemberIsReleased(way: SenderRemoval) {
      withIsolatedRegistry {
        let model = Model()
        let plain = Plain()
        let receiver = Model()
        let chain = Bind.inout(model, \.int).out(plain, \.int).out(receiver, \.int)
        way.remove(model, from: chain)
        #expect(!chain.isActive)
        #expect(Bind.activeChainCount == 0)
        #expect(chain.memberCount == 0)
      }
    }

    @Test func chainWithARemainingInoutSenderStays() {
      withIsolatedRegistry {
        let head = Model()
        let sender = Model()
        let plain = Plain()
        let chain = Bind.inout(head, \.int).inout(sender, \.int).out(plain, \.int)
        Bind.unbind(head)
        #expect(chain.isActive)
        #expect(Bind.activeChainCount == 1)
        sender.int = 4
        #expect(plain.int == 4)
        #expect(head.int == 0)
        #expect(head.intSets == 0)
      }
    }

    @Test func chainWithARemainingInSenderStays() {
      withIsolatedRegistry {
        let head = Model()
        let sender = Model()
        let plain = Plain()
        let chain = Bind.inout(head, \.int).in(sender, \.int).out(plain, \.int)
        Bind.unbind(head, \.int)
        #expect(chain.isActive)
        #expect(chain.memberCount == 2)
        sender.int = 7
        #expect(plain.int == 7)
      }
    }

    @Test func unbindingAnOutMemberNeverReleasesTheChain() {
      withIsolatedRegistry {
        let head = Model()
        let plain = Plain()
        let chain = Bind.inout(head, \.int).out(plain, \.int)
        Bind.unbind(plain)
        #expect(chain.isActive)
        #expect(Bind.activeChainCount == 1)
        #expect(chain.memberCount == 1)
      }
    }
  }

  /// A way to release a whole chain.
  enum ChainRelease: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case byCode, byChain

    var testDescription: String {
      switch self {
      case .byCode: "Bind.unbind(code)"
      case .byChain: "chain.unbind()"
      }
    }

    func release(_ chain: Chain<Int>) {
      switch self {
      case .byCode: Bind.unbind(chain.code)
      case .byChain: chain.unbind()
      }
    }
  }

  /// A way to take a chain's only sender out of it.
  enum SenderRemoval: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case object, keyPath, code, chain

    var testDescription: String {
      switch self {
      case .object: "Bind.unbind(obj)"
      case .keyPath: "Bind.unbind(obj, \\.kp)"
      case .code: "Bind.unbind(code)"
      case .chain: "chain.unbind()"
      }
    }

    func remove(_ model: Model, from chain: Chain<Int>) {
      switch self {
      case .object: Bind.unbind(model)
      case .keyPath: Bind.unbind(model, \.int)
      case .code: Bind.unbind(chain.code)
      case .chain: chain.unbind()
      }
    }
  }

  /// What is added to a chain after it was unbound.
  enum LateAddition: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case outMember, inoutMember, inMember, sink, filter

    var testDescription: String { rawValue }
  }
}
