import ChainBind
import Testing

// Docs/Semantics.md, "Negation": `negated: true` applies `!` on the way in and on the way out.
// Known CRDataBind defect: `_out_not` members were never written, not even at initial sync.

@Suite struct NegationTests {
  @Suite struct Out {
    @Test func initialSyncWritesTheNegatedValue() {
      let model = Model(bool: false)
      let lamp = Plain()

      Bind.inout(model, \.bool).out(lamp, \.bool, negated: true)

      #expect(lamp.bool == true)
      #expect(lamp.boolWrites == 1)
    }

    @Test func changesAreWrittenNegated() {
      let model = Model(bool: false)
      let lamp = Plain()
      Bind.inout(model, \.bool).out(lamp, \.bool, negated: true)

      model.bool = true
      #expect(lamp.bool == false)

      model.bool = false
      #expect(lamp.bool == true)
      #expect(lamp.boolWrites == 3)
    }

    @Test func negatedFalseDoesNotNegate() {
      let model = Model(bool: true)
      let lamp = Plain()
      Bind.inout(model, \.bool).out(lamp, \.bool, negated: false)
      #expect(lamp.bool == true)

      model.bool = false

      #expect(lamp.bool == false)
    }

    @Test func onlyTheNegatedMemberIsNegated() {
      let model = Model(bool: true)
      let straight = Plain()
      let inverted = Plain()
      var received: [Bool] = []
      Bind.inout(model, \.bool)
        .out(straight, \.bool)
        .out(inverted, \.bool, negated: true)
        .out(key: "record") { received.append($0) }

      model.bool = false

      #expect(straight.bool == false)
      #expect(inverted.bool == true)
      #expect(received == [true, false])
    }

    @Test func aNegatedMemberOfAnotherTypeGetsTheNegatedValueConverted() {
      let model = Model(bool: false)
      let label = Plain()

      Bind.inout(model, \.bool).out(label, \.string, negated: true)

      #expect(label.string == "true")

      model.bool = true

      #expect(label.string == "false")
    }
  }

  @Suite struct Inout {
    @Test func aBoundMemberReceivesNegated() {
      let model = Model(bool: false)
      let inverse = Model(bool: false)
      Bind.inout(model, \.bool).inout(inverse, \.bool, negated: true)
      #expect(inverse.bool == true)
      #expect(inverse.boolSets == 1)

      model.bool = true

      #expect(inverse.bool == false)
    }

    @Test func aBoundMemberSendsNegated() {
      let model = Model(bool: false)
      let inverse = Model(bool: false)
      Bind.inout(model, \.bool).inout(inverse, \.bool, negated: true)

      inverse.bool = false

      #expect(model.bool == true)
      #expect(model.boolSets == 1)

      inverse.bool = true

      #expect(model.bool == false)
      #expect(model.boolSets == 2)
    }

    @Test func aSwitchReceivesNegated() {
      let model = Model(bool: false)
      let toggle = Switch()
      Bind.inout(model, \.bool).inout(toggle, \.isOn, on: .valueChanged, negated: true)
      #expect(toggle.isOn == true)
      #expect(toggle.isOnWrites == 1)

      model.bool = true

      #expect(toggle.isOn == false)
    }

    @Test func aSwitchSendsNegated() {
      let model = Model(bool: false)
      let toggle = Switch()
      Bind.inout(model, \.bool).inout(toggle, \.isOn, on: .valueChanged, negated: true)

      toggle.userToggles(to: false)

      #expect(model.bool == true)
      #expect(toggle.isOn == false)

      toggle.userToggles(to: true)

      #expect(model.bool == false)
    }

    @Test func negatedFalseDoesNotNegateEitherWay() {
      let model = Model(bool: true)
      let mirror = Model(bool: false)
      let toggle = Switch()
      Bind.inout(model, \.bool)
        .inout(mirror, \.bool, negated: false)
        .inout(toggle, \.isOn, on: .valueChanged, negated: false)
      #expect(mirror.bool == true)
      #expect(toggle.isOn == true)

      toggle.userToggles(to: false)

      #expect(model.bool == false)
      #expect(mirror.bool == false)

      mirror.bool = true

      #expect(model.bool == true)
      #expect(toggle.isOn == true)
    }

    @Test func aNegatedSenderIsNotWrittenBack() {
      let model = Model(bool: true)
      let inverse = Model(bool: true)
      Bind.inout(model, \.bool).inout(inverse, \.bool, negated: true)
      #expect(inverse.bool == false)
      let inverseSets = inverse.boolSets

      inverse.bool = true

      #expect(model.bool == false)
      #expect(inverse.bool == true)
      #expect(inverse.boolSets == inverseSets + 1)
    }
  }
}
