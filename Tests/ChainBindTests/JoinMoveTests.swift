import ChainBind
import Testing

// Docs/Semantics.md, "Join and move": each (object, keyPath) belongs to at most one chain. Starting
// from a member joins its chain when the types match and otherwise moves the property into a new
// chain; adding a member that belongs to another chain moves it (cell reuse). Also `ChainCode`
// (Docs/Semantics.md, "Chains and members").

private func requireHashableAndSendable<Code: Hashable & Sendable>(_ code: Code) -> Code {
  code
}

@Suite struct JoinMoveTests {
  @Suite struct Join {
    @Test func startingFromAMemberOfTheSameTypeJoinsItsChain() {
      withIsolatedRegistry {
        let head = Model()
        let member = Model()
        let chain = Bind.inout(head, \.int).inout(member, \.int)
        #expect(Bind.activeChainCount == 1)

        let joined = Bind.inout(member, \.int)

        #expect(joined.code == chain.code)
        #expect(Bind.activeChainCount == 1)
        #expect(chain.memberCount == 2)
        #expect(joined.memberCount == 2)
      }
    }

    @Test func startingFromTheHeadAgainJoinsItsChain() {
      withIsolatedRegistry {
        let head = Model()
        let chain = Bind.inout(head, \.string)

        let again = Bind.inout(head, \.string)
        let viaIn = Bind.in(head, \.string)

        #expect(again.code == chain.code)
        #expect(viaIn.code == chain.code)
        #expect(Bind.activeChainCount == 1)
        #expect(chain.memberCount == 1)
      }
    }

    @Test func whatIsAddedThroughAJoinedHandleBelongsToTheOneChain() {
      withIsolatedRegistry {
        let head = Model()
        let member = Model()
        let label = Plain()
        let chain = Bind.inout(head, \.int).inout(member, \.int)

        Bind.inout(member, \.int).out(label, \.int)
        head.int = 6

        #expect(label.int == 6)
        #expect(chain.memberCount == 3)
        #expect(Bind.activeChainCount == 1)
      }
    }
  }

  @Suite struct Move {
    @Test func startingFromAMemberOfAnotherTypeMovesItIntoANewChain() {
      withIsolatedRegistry {
        let head = Model()
        let named = Model()
        let old = Bind.inout(head, \.int).out(named, \.string)
        #expect(named.string == "0")
        let namedSets = named.stringSets

        let new = Bind.inout(named, \.string)

        #expect(new.code != old.code)
        #expect(Bind.activeChainCount == 2)
        #expect(old.memberCount == 1)
        #expect(new.memberCount == 1)

        head.int = 5

        #expect(named.string == "0")
        #expect(named.stringSets == namedSets)
      }
    }

    @Test func addingAMemberOfAnotherChainMovesIt() {
      withIsolatedRegistry {
        let first = Model(int: 1)
        let second = Model(int: 2)
        let label = Plain()
        let old = Bind.inout(first, \.int).out(label, \.int)
        #expect(old.memberCount == 2)

        let new = Bind.inout(second, \.int).out(label, \.int)

        #expect(label.int == 2)
        #expect(old.memberCount == 1)
        #expect(new.memberCount == 2)
        let labelWrites = label.intWrites

        first.int = 10

        #expect(label.int == 2)
        #expect(label.intWrites == labelWrites)

        second.int = 20

        #expect(label.int == 20)
      }
    }

    @Test func aMovedSenderNoLongerSendsIntoItsOldChain() {
      withIsolatedRegistry {
        let first = Model()
        let second = Model()
        let shared = Model()
        Bind.inout(first, \.int).inout(shared, \.int)
        Bind.inout(second, \.int).inout(shared, \.int)

        shared.int = 7

        #expect(second.int == 7)
        #expect(first.int == 0)
        #expect(first.intSets == 0)
      }
    }

    @Test func cellReuseLeavesOnlyTheLastModelDrivingTheLabel() {
      withIsolatedRegistry {
        let models = [Model(int: 1), Model(int: 2), Model(int: 3)]
        let label = Plain()
        var chains: [Chain<Int>] = []
        for model in models {
          chains.append(Bind.inout(model, \.int).out(label, \.string))
        }
        #expect(label.string == "3")
        #expect(chains.map(\.memberCount) == [1, 1, 2])
        let labelWrites = label.stringWrites

        models[0].int = 10
        models[1].int = 20

        #expect(label.string == "3")
        #expect(label.stringWrites == labelWrites)

        models[2].int = 30

        #expect(label.string == "30")
        #expect(label.stringWrites == labelWrites + 1)
      }
    }

    @Test func movingAMemberWithinItsOwnChainKeepsOneMembership() {
      withIsolatedRegistry {
        let head = Model()
        let label = Plain()
        let chain = Bind.inout(head, \.int).out(label, \.int).out(label, \.int)

        head.int = 4

        #expect(chain.memberCount == 2)
        #expect(label.intWrites == 1)
      }
    }
  }

  @Suite struct Codes {
    @Test func chainCodesAreHashableSendableAndCompareByChain() {
      withIsolatedRegistry {
        let first = Model()
        let second = Model()
        let firstChain = Bind.inout(first, \.int)
        let secondChain = Bind.inout(second, \.int)
        let copy = firstChain

        let codes: Set<ChainCode> = [
          requireHashableAndSendable(firstChain.code),
          secondChain.code,
          copy.code,
          Bind.inout(first, \.int).code,
        ]

        #expect(codes.count == 2)
        #expect(firstChain.code != secondChain.code)
        #expect(copy.code == firstChain.code)
      }
    }

    @Test func aChainCodeDescriptionNamesTheHead() {
      let model = Model()
      let otherModel = Model()

      let modelCode = Bind.inout(model, \.int).code
      let otherCode = Bind.inout(otherModel, \.int).code

      #expect(modelCode.description.contains("Model.int"))
      #expect(modelCode.description != otherCode.description)
    }

    @Test func aControlHeadsCodeDescriptionNamesItsTypeAndKeyPath() {
      let field = TextField()
      // `text` has observers, so its key path prints as `<computed String>` on Linux; a plain
      // stored property prints its name.
      let observed = Bind.inout(field, \.text, on: .editingChanged).code
      let stored = Bind.inout(field, \.placeholder, on: .editingChanged).code

      #expect(observed.description.hasPrefix("TextField."))
      #expect(observed.description.contains("String"))
      #expect(stored.description.hasPrefix("TextField.placeholder#"))
    }
  }
}
