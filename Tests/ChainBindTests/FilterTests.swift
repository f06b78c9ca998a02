import ChainBind
import Observation
import Testing

// Docs/Semantics.md, "Filters": filters run first, on the change's value in the chain's type. If
// any filter rejects, nothing is written, no sink runs, and the originating member is reverted to
// the chain's last accepted value (when its key path is writable), without triggering a new change.

/// A dial whose reading is read-only from outside: a control bound `in` through a `KeyPath`
/// that cannot be written, so a rejected change cannot be reverted.
private final class FilterReadOnlyDial: ControlEventSource {
  enum Event { case turned }
  let controlEvents = ControlEvents<Event>()
  private var storage = 0
  var reading: Int { storage }

  func userTurns(to newValue: Int) {
    storage = newValue
    controlEvents.send(.turned)
  }
}

/// Properties only the gauge sets: their key paths are read-only outside it, though at run time
/// such a key path casts to a writable one.
private final class Gauge {
  @Bound private(set) var level = 0
  @Bound var setting = 0
  @Bound private(set) var isIdle = true
  @Bound var isIdleSetting = true

  func report(_ value: Int) { level = value }

  func report(idle: Bool) { isIdle = idle }
}

@Observable
private final class ObservedGauge {
  private(set) var level = 0
  var setting = 0

  func report(_ value: Int) { level = value }
}

@Suite struct FilterTests {
  // MARK: Rejection and revert

  @Suite struct RejectedChanges {
    @Test func aRejectedModelChangeIsRevertedAndReachesNoOne() {
      let model = Model()
      let mirror = Model()
      let label = Plain()
      var received: [Int] = []
      Bind.inout(model, \.int)
        .inout(mirror, \.int)
        .out(label, \.int)
        .out(key: "record") { received.append($0) }
        .filter { $0 < 10 }
      model.int = 5
      let mirrorSets = mirror.intSets
      let labelWrites = label.intWrites

      model.int = 50

      #expect(model.int == 5)
      #expect(mirror.int == 5)
      #expect(label.int == 5)
      #expect(mirror.intSets == mirrorSets)
      #expect(label.intWrites == labelWrites)
      #expect(received == [0, 5])
    }

    @Test func aRejectedControlChangeRevertsTheFieldAndLeavesTheModel() {
      let model = Model(string: "666")
      let field = TextField()
      let label = Plain()
      var received: [String] = []
      Bind.inout(model, \.string)
        .out(label, \.string)
        .inout(field, \.text, on: .editingChanged)
        .out(key: "record") { received.append($0) }
        .filter { $0.count <= 3 }
      #expect(field.text == "666")
      let labelWrites = label.stringWrites

      field.userTypes("6667")

      #expect(field.text == "666")
      #expect(model.string == "666")
      #expect(model.stringSets == 0)
      #expect(label.string == "666")
      #expect(label.stringWrites == labelWrites)
      #expect(received == ["666"])
    }

    @Test func theRevertIsNotANewChange() {
      let model = Model()
      let other = Model()
      let field = TextField()
      var sinkCalls = 0
      Bind.inout(model, \.string)
        .inout(other, \.string)
        .inout(field, \.text, on: .editingChanged)
        .out(key: "count") { _ in sinkCalls += 1 }
        .filter { !$0.contains("x") }
      field.userTypes("ab")
      let otherSets = other.stringSets
      let modelSets = model.stringSets
      let fieldWrites = field.textWrites

      field.userTypes("abx")

      #expect(field.text == "ab")
      #expect(field.textWrites == fieldWrites + 2)  // the user's edit, then the revert
      #expect(sinkCalls == 2)
      #expect(model.stringSets == modelSets)
      #expect(other.stringSets == otherSets)

      other.string = "x"

      #expect(other.string == "ab")
      #expect(sinkCalls == 2)
      #expect(model.stringSets == modelSets)
      #expect(field.textWrites == fieldWrites + 2)
    }

    @Test func theRevertRestoresTheLastAcceptedValueNotAnEarlierOne() {
      let model = Model()
      let field = TextField()
      Bind.inout(model, \.string)
        .inout(field, \.text, on: .editingChanged)
        .filter { $0.count <= 3 }
      field.userTypes("1")
      field.userTypes("12")

      field.userTypes("1234")
      #expect(field.text == "12")

      field.userTypes("12345")
      #expect(field.text == "12")
      #expect(model.string == "12")
    }

    @Test func aRejectedChangeNeverClearsTheField() {
      let model = Model(string: "abc")
      let field = TextField()
      Bind.inout(model, \.string)
        .inout(field, \.text, on: .editingChanged)
        .filter { $0.count <= 3 }

      field.userTypes("abcd")

      #expect(field.text == "abc")
      #expect(!field.text.isEmpty)
    }

    @Test func aRejectedChangeFromAWritableInMemberIsReverted() {
      let model = Model(int: 1)
      let source = Model(int: 2)
      var received: [Int] = []
      Bind.inout(model, \.int)
        .in(source, \.int)
        .out(key: "record") { received.append($0) }
        .filter { $0 < 10 }

      source.int = 50

      #expect(source.int == 1)
      #expect(model.int == 1)
      #expect(model.intSets == 0)
      #expect(received == [1])
    }

    @Test func aRejectedChangeFromAReadOnlyInMemberIsDroppedWithoutRevert() {
      let model = Model(int: 1)
      let dial = FilterReadOnlyDial()
      let label = Plain()
      var received: [Int] = []
      Bind.inout(model, \.int)
        .in(dial, \.reading, on: .turned)
        .out(label, \.int)
        .out(key: "record") { received.append($0) }
        .filter { $0 < 10 }
      let labelWrites = label.intWrites

      dial.userTurns(to: 50)

      #expect(dial.reading == 50)
      #expect(model.int == 1)
      #expect(model.intSets == 0)
      #expect(label.intWrites == labelWrites)
      #expect(received == [1])

      dial.userTurns(to: 7)

      #expect(model.int == 7)
      #expect(label.int == 7)
      #expect(received == [1, 7])
    }

    /// How a gauge's property is bound `in`, and whether it is written where it is bound.
    enum GaugeShape: String, CaseIterable, CustomTestStringConvertible {
      case startedFrom, added, addedConverted, addedNegated, observableStartedFrom
      var testDescription: String { rawValue }
    }

    // "When its key path is writable" is told where the member is added: a `private(set)`
    // property is not written by a chain that cannot write it, not even to revert.
    @Test(arguments: GaugeShape.allCases, [false, true])
    func aRejectedChangeIsRevertedOnlyThroughAKeyPathWritableWhereBound(
      shape: GaugeShape, writable: Bool
    ) {
      let gauge = Gauge()
      let observed = ObservedGauge()
      let head = Model()
      let late = Plain()
      var rejected: [String] = []
      // Each shape: a change the filter accepts, one it rejects, and what the property holds.
      let accept: () -> Void
      let reject: () -> Void
      let held: () -> String
      let addLate: () -> Void
      switch shape {
      case .startedFrom, .added:
        let chain =
          shape == .startedFrom
          ? (writable ? Bind.in(gauge, \.setting) : Bind.in(gauge, \.level))
          : Bind.inout(head, \.int)
        if shape == .added {
          _ = writable ? chain.in(gauge, \.setting) : chain.in(gauge, \.level)
        }
        chain.filter { $0 < 10 }.onReject { rejected.append(String($0)) }
        addLate = { chain.out(late, \.int) }
      case .addedConverted:
        let chain = Bind.inout(head, \.string)
        _ = writable ? chain.in(gauge, \.setting) : chain.in(gauge, \.level)
        chain.filter { (Int($0) ?? 0) < 10 }.onReject { rejected.append($0) }
        addLate = { chain.out(late, \.int) }
      case .addedNegated:
        let chain = Bind.inout(head, \.bool)
        _ =
          writable
          ? chain.in(gauge, \.isIdleSetting, negated: true)
          : chain.in(gauge, \.isIdle, negated: true)
        chain.filter { !$0 }.onReject { rejected.append(String($0)) }
        addLate = { chain.out(late, \.int, convert: { $0 ? 1 : 3 }) }
      case .observableStartedFrom:
        let chain = writable ? Bind.in(observed, \.setting) : Bind.in(observed, \.level)
        chain.filter { $0 < 10 }.onReject { rejected.append(String($0)) }
        addLate = { chain.out(late, \.int) }
      }
      switch shape {
      case .addedNegated:
        accept = { writable ? (gauge.isIdleSetting = true) : gauge.report(idle: true) }
        reject = { writable ? (gauge.isIdleSetting = false) : gauge.report(idle: false) }
        held = { String(writable ? gauge.isIdleSetting : gauge.isIdle) }
      case .observableStartedFrom:
        accept = { writable ? (observed.setting = 3) : observed.report(3) }
        reject = { writable ? (observed.setting = 20) : observed.report(20) }
        held = { String(writable ? observed.setting : observed.level) }
      default:
        accept = { writable ? (gauge.setting = 3) : gauge.report(3) }
        reject = { writable ? (gauge.setting = 20) : gauge.report(20) }
        held = { String(writable ? gauge.setting : gauge.level) }
      }

      accept()
      reject()

      // The property's values accepted and rejected; the chain's value rejected.
      let (acceptedSet, rejectedSet) = shape == .addedNegated ? ("true", "false") : ("3", "20")
      #expect(rejected == [shape == .addedNegated ? "true" : "20"])
      #expect(held() == (writable ? acceptedSet : rejectedSet))
      addLate()
      #expect(late.int == 3, "the chain keeps its last accepted value")
    }

    @Test func anAcceptedChangeAfterARejectionPropagates() {
      let model = Model(string: "666")
      let field = TextField()
      let label = Plain()
      var received: [String] = []
      Bind.inout(model, \.string)
        .out(label, \.string)
        .inout(field, \.text, on: .editingChanged)
        .out(key: "record") { received.append($0) }
        .filter { $0.count <= 3 }
      field.userTypes("6667")

      field.userTypes("12")

      #expect(model.string == "12")
      #expect(label.string == "12")
      #expect(field.text == "12")
      #expect(received == ["666", "12"])

      model.string = "777"

      #expect(field.text == "777")
      #expect(label.string == "777")
    }
  }

  // MARK: Several filters

  /// A value typed into a field guarded by three filters, and whether the chain accepts it.
  struct SeveralFiltersCase: Sendable, CustomTestStringConvertible {
    let typed: String
    let rejectedBy: String?

    var testDescription: String {
      "\"\(typed)\" is " + (rejectedBy.map { "rejected by \($0)" } ?? "accepted")
    }
  }

  @Suite struct SeveralFilters {
    @Test(arguments: [
      SeveralFiltersCase(typed: "12", rejectedBy: nil),
      SeveralFiltersCase(typed: "123", rejectedBy: nil),
      SeveralFiltersCase(typed: "", rejectedBy: nil),
      SeveralFiltersCase(typed: "1234", rejectedBy: "the length filter"),
      SeveralFiltersCase(typed: "1a", rejectedBy: "the digits filter"),
      SeveralFiltersCase(typed: "000", rejectedBy: "the not-zeros filter"),
      SeveralFiltersCase(typed: "12a4", rejectedBy: "the length and digits filters"),
    ])
    func everyFilterMustPass(_ testCase: SeveralFiltersCase) {
      let model = Model(string: "666")
      let field = TextField()
      var received: [String] = []
      Bind.inout(model, \.string)
        .inout(field, \.text, on: .editingChanged)
        .out(key: "record") { received.append($0) }
        .filter { $0.count <= 3 }
        .filter { $0.allSatisfy(\.isNumber) }
        .filter { $0 != "000" }

      field.userTypes(testCase.typed)

      if testCase.rejectedBy == nil {
        #expect(model.string == testCase.typed)
        #expect(field.text == testCase.typed)
        #expect(received == ["666", testCase.typed])
      } else {
        #expect(model.string == "666")
        #expect(model.stringSets == 0)
        #expect(field.text == "666")
        #expect(received == ["666"])
      }
    }

    @Test func filtersOfAnotherChainDoNotApply() {
      let guarded = Model()
      let free = Model()
      Bind.inout(guarded, \.int).filter { $0 < 10 }
      Bind.inout(free, \.int)

      guarded.int = 50
      free.int = 50

      #expect(guarded.int == 0)
      #expect(free.int == 50)
    }
  }

  // MARK: The value filters see

  @Suite struct FilteredValue {
    @Test func filtersSeeTheValueInTheChainsType() {
      let model = Model()
      let field = TextField()
      var seen: [Int] = []
      Bind.inout(model, \.int)
        .inout(field, \.text, on: .editingChanged)
        .filter { (value: Int) in
          seen.append(value)
          return value < 100
        }

      field.userTypes(" 42 ")
      field.userTypes("500")

      #expect(seen == [42, 500])
      #expect(model.int == 42)
      // Reverted to the last accepted value, converted into the field's type.
      #expect(field.text == "42")
    }

    @Test func filtersSeeTheNegatedValueOfANegatedMember() {
      let model = Model(bool: false)
      let toggle = Switch()
      var seen: [Bool] = []
      Bind.inout(model, \.bool)
        .inout(toggle, \.isOn, on: .valueChanged, negated: true)
        .filter { value in
          seen.append(value)
          return true
        }

      toggle.userToggles(to: false)

      #expect(seen == [true])
      #expect(model.bool == true)
    }

    @Test func aFilterAddedLaterAppliesOnlyToLaterChanges() {
      let model = Model()
      let label = Plain()
      let chain = Bind.inout(model, \.int).out(label, \.int)
      model.int = 50

      chain.filter { $0 < 10 }

      #expect(model.int == 50)
      #expect(label.int == 50)

      model.int = 60

      #expect(model.int == 50)
      #expect(label.int == 50)
      #expect(label.intWrites == 1)

      model.int = 5

      #expect(model.int == 5)
      #expect(label.int == 5)
    }
  }
}
