import ChainBind
import Testing

// Docs/Semantics.md, "Initial sync": the chain's current value is its head's value at creation;
// every receiving member (out, inout, sink) gets the current value when it is added; `in` members
// are not written.

@Suite struct InitialSyncTests {
  @Test func theChainStartsWithTheHeadsValue() {
    let model = Model(int: 7)
    var received: [Int] = []

    Bind.inout(model, \.int).out(key: "record") { received.append($0) }

    #expect(received == [7])
    #expect(model.int == 7)
    #expect(model.intSets == 0)
  }

  @Test func anInHeadGivesTheChainItsValueAndIsNotWritten() {
    let head = Model(string: "head")
    let label = Plain()

    Bind.in(head, \.string).out(label, \.string)

    #expect(label.string == "head")
    #expect(head.stringSets == 0)
  }

  @Test func aControlHeadGivesTheChainItsValue() {
    let field = TextField()
    field.text = "typed before binding"
    let model = Model()

    Bind.inout(field, \.text, on: .editingChanged).inout(model, \.string)

    #expect(model.string == "typed before binding")
  }

  @Test func anOutMemberGetsTheCurrentValueWhenAdded() {
    let model = Model(int: 3)
    let label = Plain()
    let chain = Bind.inout(model, \.int)
    #expect(label.intWrites == 0)

    chain.out(label, \.int)

    #expect(label.int == 3)
    #expect(label.intWrites == 1)
  }

  @Test func anInoutMemberGetsTheCurrentValueWhenAdded() {
    let model = Model(string: "hello")
    let other = Model(string: "other")

    Bind.inout(model, \.string).inout(other, \.string)

    #expect(other.string == "hello")
    #expect(other.stringSets == 1)
    // The new member's own value never replaces the chain's.
    #expect(model.string == "hello")
    #expect(model.stringSets == 0)
  }

  @Test func anInoutControlGetsTheCurrentValueWhenAdded() {
    let model = Model(double: 0.25)
    let slider = Slider()

    Bind.inout(model, \.double).inout(slider, \.value, on: .valueChanged)

    #expect(slider.value == 0.25)
    #expect(slider.valueWrites == 1)
  }

  @Test func aSinkIsCalledOnceWithTheCurrentValueWhenAdded() {
    let model = Model(int: 11)
    let chain = Bind.inout(model, \.int)
    var received: [Int] = []

    chain.out(key: "record") { received.append($0) }

    #expect(received == [11])
  }

  @Test func anInMemberIsNotWritten() {
    let model = Model(int: 7)
    let source = Model(int: 3)

    Bind.inout(model, \.int).in(source, \.int)

    #expect(source.int == 3)
    #expect(source.intSets == 0)
    #expect(model.int == 7)
    #expect(model.intSets == 0)
  }

  @Test func anInControlIsNotWritten() {
    let model = Model(string: "model")
    let field = TextField()
    field.text = "field"
    field.textWrites = 0

    Bind.inout(model, \.string).in(field, \.text, on: .editingChanged)

    #expect(field.text == "field")
    #expect(field.textWrites == 0)
    #expect(model.string == "model")
  }

  @Test func membersAddedLaterGetTheLatestAcceptedValue() {
    let model = Model(int: 1)
    let chain = Bind.inout(model, \.int)
    model.int = 2
    model.int = 5
    let label = Plain()
    let mirror = Model()

    chain.out(label, \.string).inout(mirror, \.int)

    #expect(label.string == "5")
    #expect(mirror.int == 5)
  }

  @Test func aMemberAddedLaterGetsAValueChangedByAnotherMember() {
    let model = Model()
    let field = TextField()
    let chain = Bind.inout(model, \.string).inout(field, \.text, on: .editingChanged)
    field.userTypes("from the field")
    let label = Plain()

    chain.out(label, \.string)

    #expect(label.string == "from the field")
  }

  @Test func aMemberAddedAfterARejectedChangeGetsTheLastAcceptedValue() {
    let model = Model(int: 1)
    let chain = Bind.inout(model, \.int).filter { $0 < 10 }
    model.int = 5
    model.int = 50
    let label = Plain()

    chain.out(label, \.int)

    #expect(label.int == 5)
  }

  @Test func aSinkAddedLaterIsCalledOnceImmediatelyWithTheCurrentValue() {
    let model = Model()
    let chain = Bind.inout(model, \.string)
    model.string = "one"
    model.string = "two"
    var received: [String] = []

    chain.out(key: "late") { received.append($0) }

    #expect(received == ["two"])

    model.string = "three"

    #expect(received == ["two", "three"])
  }

  @Test func aMemberWithItsOwnConversionGetsTheConvertedCurrentValue() {
    let model = Model(int: 4)
    let label = Plain()

    Bind.inout(model, \.int).out(label, \.string, convert: { "#\($0)" })

    #expect(label.string == "#4")
  }
}
