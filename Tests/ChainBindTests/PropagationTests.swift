import ChainBind
import Testing

// Docs/Semantics.md, "Propagation" (every set is a change; the originating member is never written
// back; equal members are not written; sinks run on every accepted change; members, then sinks, in
// the order added) and "Roles" (member roles).

/// A value that is not `Equatable`: ChainBind cannot skip writing it, so a write-back to the
/// originating member would show in its counter.
private struct PropagationOpaqueValue {
  var number: Int
}

/// Holds a non-`Equatable` `@Bound` value and counts the writes it gets.
private final class PropagationOpaqueHolder {
  @Bound var value = PropagationOpaqueValue(number: 0) { didSet { valueWrites += 1 } }
  var valueWrites = 0
}

/// The order in which members were written and sinks called, shared by the recorders of a test.
private final class PropagationOrderLog {
  var entries: [String] = []
}

/// A `@Bound` property that logs its name into a shared log each time it is set.
private final class PropagationRecorder {
  let name: String
  let log: PropagationOrderLog
  @Bound var value = 0 { didSet { log.entries.append(name) } }

  init(_ name: String, log: PropagationOrderLog) {
    self.name = name
    self.log = log
  }
}

@Suite struct PropagationTests {
  // MARK: Every set is a change (Docs/Semantics.md, "Propagation")

  @Suite struct EverySetIsAChange {
    @Test func settingAnEqualValueStillRunsTheSinks() {
      let model = Model(int: 5)
      var received: [Int] = []
      Bind.inout(model, \.int).out(key: "record") { received.append($0) }

      model.int = 5
      model.int = 5
      model.int = 5

      #expect(received == [5, 5, 5, 5])
    }

    @Test func sendingTheSameControlValueTwiceIsTwoChanges() {
      let model = Model()
      let field = TextField()
      var received: [String] = []
      Bind.inout(model, \.string)
        .inout(field, \.text, on: .editingChanged)
        .out(key: "record") { received.append($0) }

      field.userTypes("same")
      field.userTypes("same")

      #expect(received == ["", "same", "same"])
      #expect(model.string == "same")
    }

    @Test func aChangeFromAnyMemberReachesEveryOtherReceivingMemberThenTheSinks() {
      let head = Model()
      let middle = Model()
      let label = Plain()
      var labelTextSeenBySink: [String] = []
      var received: [Int] = []
      Bind.inout(head, \.int)
        .inout(middle, \.int)
        .out(label, \.string)
        .out(key: "record") { value in
          received.append(value)
          labelTextSeenBySink.append(label.string)
        }

      middle.int = 4

      #expect(head.int == 4)
      #expect(label.string == "4")
      #expect(received == [0, 4])
      // The sink ran after the members were written: it already saw the label's new text.
      #expect(labelTextSeenBySink == ["0", "4"])
    }

    @Test func theOriginatingMemberIsNeverWrittenBack() {
      let first = PropagationOpaqueHolder()
      let second = PropagationOpaqueHolder()
      Bind.inout(first, \.value).inout(second, \.value)
      // Not Equatable, so every receiving member is written on every change.
      let firstWrites = first.valueWrites
      let secondWrites = second.valueWrites

      first.value = PropagationOpaqueValue(number: 7)

      #expect(first.valueWrites == firstWrites + 1)  // the user's set only: no write-back
      #expect(second.valueWrites == secondWrites + 1)
      #expect(second.value.number == 7)

      second.value = PropagationOpaqueValue(number: 8)

      #expect(second.valueWrites == secondWrites + 2)  // the user's set only
      #expect(first.valueWrites == firstWrites + 2)
      #expect(first.value.number == 8)
    }

    @Test func aControlThatSendsIsNotWrittenBackWithItsConvertedValue() {
      let model = Model(int: 1)
      let field = TextField()
      Bind.inout(model, \.int).inout(field, \.text, on: .editingChanged)
      #expect(field.text == "1")
      let writesBefore = field.textWrites

      field.userTypes(" 42 ")

      #expect(model.int == 42)
      // A write-back would have replaced " 42 " with "42".
      #expect(field.text == " 42 ")
      #expect(field.textWrites == writesBefore + 1)
    }

    @Test func aModelThatSendsIsNotWrittenBack() {
      let model = Model()
      let other = Model()
      Bind.inout(model, \.int).inout(other, \.int)

      model.int = 3

      #expect(model.intSets == 1)
      #expect(other.intSets == 1)
      #expect(other.int == 3)
    }
  }

  // MARK: Equal members are not written (Docs/Semantics.md, "Propagation")

  @Suite struct EqualValues {
    @Test func aMemberAlreadyHoldingTheValueIsNotWritten() {
      let model = Model()
      let holdsFive = Plain()
      let holdsZero = Plain()
      var sinkCalls = 0
      Bind.inout(model, \.int)
        .out(holdsFive, \.int)
        .out(holdsZero, \.int)
        .out(key: "count") { _ in sinkCalls += 1 }
      holdsFive.int = 5
      holdsFive.intWrites = 0
      #expect(holdsZero.intWrites == 0)  // already 0 at initial sync

      model.int = 5

      #expect(holdsFive.intWrites == 0)
      #expect(holdsZero.intWrites == 1)
      #expect(holdsZero.int == 5)
      #expect(sinkCalls == 2)

      model.int = 5

      #expect(holdsFive.intWrites == 0)
      #expect(holdsZero.intWrites == 1)
      #expect(sinkCalls == 3)
    }

    @Test func equalityIsJudgedAfterConversion() {
      let model = Model()
      let label = Plain()
      Bind.inout(model, \.int).out(label, \.string)
      label.string = "5"
      label.stringWrites = 0

      model.int = 5

      #expect(label.stringWrites == 0)

      model.int = 6

      #expect(label.stringWrites == 1)
      #expect(label.string == "6")
    }

    @Test func equalValuesAreNotWrittenIntoBoundMembersEither() {
      let model = Model(string: "a")
      let other = Model(string: "b")
      var received: [String] = []
      Bind.inout(model, \.string)
        .inout(other, \.string)
        .out(key: "record") { received.append($0) }
      #expect(other.stringSets == 1)  // initial sync: "b" -> "a"

      model.string = "a"

      #expect(other.stringSets == 1)
      #expect(received == ["a", "a"])
    }
  }

  // MARK: Order (Docs/Semantics.md, "Propagation")

  @Suite struct Order {
    @Test func membersAreWrittenInTheOrderAddedThenSinksInTheOrderAdded() {
      let log = PropagationOrderLog()
      let model = Model()
      let first = PropagationRecorder("first", log: log)
      let second = PropagationRecorder("second", log: log)
      let third = PropagationRecorder("third", log: log)
      Bind.inout(model, \.int)
        .out(first, \.value)
        .out(key: "sinkA") { _ in log.entries.append("sinkA") }
        .out(second, \.value)
        .out(key: "sinkB") { _ in log.entries.append("sinkB") }
        .out(third, \.value)
      log.entries.removeAll()

      model.int = 1

      #expect(log.entries == ["first", "second", "third", "sinkA", "sinkB"])

      log.entries.removeAll()
      model.int = 2

      #expect(log.entries == ["first", "second", "third", "sinkA", "sinkB"])
    }

    @Test func initialSyncFollowsTheOrderAdded() {
      let log = PropagationOrderLog()
      let model = Model(int: 9)
      let first = PropagationRecorder("first", log: log)
      let second = PropagationRecorder("second", log: log)

      Bind.inout(model, \.int)
        .out(second, \.value)
        .out(key: "sink") { _ in log.entries.append("sink") }
        .out(first, \.value)

      #expect(log.entries == ["second", "sink", "first"])
    }

    @Test(arguments: 0..<3)
    func theOtherMembersAreWrittenInOrderWhicheverMemberSends(origin: Int) {
      let log = PropagationOrderLog()
      let recorders = ["a", "b", "c"].map { PropagationRecorder($0, log: log) }
      Bind.inout(recorders[0], \.value)
        .inout(recorders[1], \.value)
        .inout(recorders[2], \.value)
        .out(key: "sink") { _ in log.entries.append("sink") }
      log.entries.removeAll()

      recorders[origin].value = 10

      let originName = recorders[origin].name
      let others = ["a", "b", "c"].filter { $0 != originName }
      // The origin's own didSet logs once, for the user's set (no write-back); where it lands
      // relative to the chain's writes is Swift's business, so it is counted, not placed.
      #expect(log.entries.filter { $0 != originName } == others + ["sink"])
      #expect(log.entries.filter { $0 == originName }.count == 1)
      #expect(recorders.allSatisfy { $0.value == 10 })
    }
  }

  // MARK: Roles (Docs/Semantics.md)

  @Suite struct Roles {
    @Test func inMembersSendButAreNeverWrittenByPropagation() {
      let head = Model(int: 1)
      let source = Model(int: 3)
      Bind.inout(head, \.int).in(source, \.int)

      head.int = 8

      #expect(source.int == 3)
      #expect(source.intSets == 0)

      source.int = 4

      #expect(head.int == 4)
      #expect(source.intSets == 1)
    }

    @Test func anInHeadIsNeverWrittenByPropagation() {
      let head = Model(int: 1)
      let other = Model()
      Bind.in(head, \.int).inout(other, \.int)
      #expect(other.int == 1)

      other.int = 5

      #expect(head.int == 1)
      #expect(head.intSets == 0)

      head.int = 6

      #expect(other.int == 6)
    }

    @Test func outMembersReceiveButNeverSend() {
      let head = Model(int: 1)
      let receiver = Model()
      var sinkCalls = 0
      Bind.inout(head, \.int)
        .out(receiver, \.int)
        .out(key: "count") { _ in sinkCalls += 1 }
      #expect(receiver.int == 1)

      receiver.int = 9

      #expect(head.int == 1)
      #expect(head.intSets == 0)
      #expect(sinkCalls == 1)

      head.int = 2

      #expect(receiver.int == 2)
    }

    @Test func inoutMembersSendAndReceive() {
      let head = Model()
      let member = Model()
      Bind.inout(head, \.string).inout(member, \.string)

      head.string = "from head"
      #expect(member.string == "from head")

      member.string = "from member"
      #expect(head.string == "from member")
    }

    @Test func aControlSendsOnlyOnItsEventNotOnProgrammaticSets() {
      let model = Model(string: "start")
      let field = TextField()
      Bind.inout(model, \.string).inout(field, \.text, on: .editingChanged)
      #expect(field.text == "start")

      field.text = "typed"

      #expect(model.string == "start")
      #expect(model.stringSets == 0)

      field.controlEvents.send(.editingDidEnd)

      #expect(model.string == "start")
      #expect(model.stringSets == 0)

      field.controlEvents.send(.editingChanged)

      #expect(model.string == "typed")
      #expect(model.stringSets == 1)
    }

    @Test func anInoutControlReceives() {
      let model = Model()
      let slider = Slider()
      Bind.inout(model, \.double).inout(slider, \.value, on: .valueChanged)

      model.double = 0.75

      #expect(slider.value == 0.75)
    }

    @Test func anInControlSendsButIsNeverWritten() {
      let model = Model(string: "model")
      let field = TextField()
      field.text = "field"
      field.textWrites = 0
      Bind.inout(model, \.string).in(field, \.text, on: .editingChanged)

      model.string = "changed"

      #expect(field.text == "field")
      #expect(field.textWrites == 0)

      field.userTypes("typed")

      #expect(model.string == "typed")
    }

    @Test func eachPropertyOfAControlHasItsOwnEvent() {
      let textModel = Model()
      let placeholderModel = Model()
      let field = TextField()
      Bind.inout(textModel, \.string).inout(field, \.text, on: .editingChanged)
      Bind.inout(placeholderModel, \.string).inout(field, \.placeholder, on: .editingDidEnd)
      field.text = "text"
      field.placeholder = "placeholder"

      field.controlEvents.send(.editingDidEnd)

      #expect(placeholderModel.string == "placeholder")
      #expect(textModel.string == "")
      #expect(textModel.stringSets == 0)

      field.controlEvents.send(.editingChanged)

      #expect(textModel.string == "text")
      #expect(placeholderModel.stringSets == 1)
    }
  }
}
