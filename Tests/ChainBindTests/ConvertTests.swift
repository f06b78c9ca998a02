import ChainBind
import Testing

// Docs/Semantics.md, "Per-member conversion" to "Failures never write defaults": per-member
// conversions, the automatic conversion table between `BindConvertible` types, and what a failed
// conversion does (never writes a default value).

/// A user type that converts automatically: a level stored as its raw number.
private enum ConvertLevel: Int, BindConvertible {
  case low, medium, high

  var bindPrimitive: BindPrimitive { .int(rawValue) }

  init?(bindPrimitive: BindPrimitive) {
    guard let raw = Int(bindPrimitive: bindPrimitive) else { return nil }
    self.init(rawValue: raw)
  }
}

/// A convertible type whose conversion is lossy, keeping only `id`.
///
/// Binding it to a member of its own type must copy it as is, never convert it.
private struct ConvertLossyTag: BindConvertible, Equatable {
  var id: Int
  var note: String

  var bindPrimitive: BindPrimitive { .int(id) }

  init(id: Int, note: String) {
    self.id = id
    self.note = note
  }

  init?(bindPrimitive: BindPrimitive) {
    guard let id = Int(bindPrimitive: bindPrimitive) else { return nil }
    self.init(id: id, note: "made by conversion")
  }
}

/// Holds `@Bound` properties of the user types above.
private final class ConvertHolder {
  @Bound var level = ConvertLevel.low
  @Bound var tag = ConvertLossyTag(id: 0, note: "original")
}

private func isConversionFailure(_ error: BindingError) -> Bool {
  if case .conversionFailed = error.cause { return true }
  return false
}

private func isBackConversionFailure(_ error: BindingError) -> Bool {
  if case .backConversionFailed = error.cause { return true }
  return false
}

@Suite struct ConvertTests {
  // MARK: Per-member conversion (Docs/Semantics.md)

  @Suite struct MemberConversions {
    @Test func outConvertsTheChainValueForThatMemberOnly() {
      let model = Model(int: 3)
      let badge = Plain()
      let label = Plain()
      Bind.inout(model, \.int)
        .out(badge, \.string, convert: { "#\($0)" })
        .out(label, \.string)

      #expect(badge.string == "#3")

      model.int = 4

      #expect(badge.string == "#4")
      #expect(label.string == "4")
    }

    @Test func outConvertMayChangeTheValueWithinTheSameType() {
      let model = Model(int: 3)
      let doubled = Plain()
      Bind.inout(model, \.int).out(doubled, \.int, convert: { $0 * 2 })

      model.int = 21

      #expect(doubled.int == 42)
      #expect(model.int == 21)
    }

    @Test func inoutConvertsBothWays() {
      let model = Model(int: 5)
      let percent = Model()
      Bind.inout(model, \.int)
        .inout(percent, \.string, convert: { "\($0)%" }, back: { Int($0.dropLast()) })
      #expect(percent.string == "5%")

      percent.string = "40%"

      #expect(model.int == 40)

      model.int = 7

      #expect(percent.string == "7%")
    }

    @Test func inoutControlConvertsBothWays() {
      let model = Model(int: 50)
      let slider = Slider()
      Bind.inout(model, \.int)
        .inout(
          slider, \.value, on: .valueChanged,
          convert: { Double($0) / 100 }, back: { Int(($0 * 100).rounded()) })
      #expect(slider.value == 0.5)

      slider.userSlides(to: 0.25)

      #expect(model.int == 25)

      model.int = 80

      #expect(slider.value == 0.8)
    }

    @Test func backReturningNilDropsTheChangeAndKeepsWhatTheUserTyped() throws {
      let model = Model(int: 5)
      let field = TextField()
      let label = Plain()
      let errors = ErrorLog()
      var received: [Int] = []
      let chain = Bind.inout(model, \.int)
        .onError(errors.handler)
        .out(label, \.int)
        .inout(
          field, \.text, on: .editingChanged,
          convert: { String($0) }, back: { Int($0) }
        )
        .out(key: "record") { received.append($0) }
      let labelWrites = label.intWrites

      field.userTypes("abc")

      #expect(field.text == "abc")
      #expect(field.textWrites == 2)  // initial sync, then the user's edit: no revert
      #expect(model.int == 5)
      #expect(model.intSets == 0)
      #expect(label.intWrites == labelWrites)
      #expect(received == [5])
      #expect(errors.errors.count == 1)
      let error = try #require(errors.errors.first)
      #expect(isBackConversionFailure(error))
      #expect(error.chain == chain.code)

      // The chain kept its last accepted value: a member added now gets it.
      let late = Plain()
      chain.out(late, \.int)
      #expect(late.int == 5)
    }

    @Test func backReturningNilFromABoundMemberDropsTheChange() {
      let model = Model(int: 5)
      let percent = Model()
      let errors = ErrorLog()
      Bind.inout(model, \.int)
        .onError(errors.handler)
        .inout(percent, \.string, convert: { "\($0)%" }, back: { Int($0.dropLast()) })

      percent.string = "lots"

      #expect(model.int == 5)
      #expect(model.intSets == 0)
      #expect(percent.string == "lots")
      #expect(errors.errors.count == 1)
      #expect(errors.errors.allSatisfy(isBackConversionFailure))
    }
  }

  // MARK: Failures never write defaults (Docs/Semantics.md)

  @Suite struct Failures {
    @Test func anOutwardFailureSkipsOnlyThatMember() {
      let model = Model(double: 4)
      let whole = Plain()
      let text = Plain()
      let errors = ErrorLog()
      var received: [Double] = []
      Bind.inout(model, \.double)
        .onError(errors.handler)
        .out(whole, \.int)
        .out(text, \.string)
        .out(key: "record") { received.append($0) }
      #expect(whole.int == 4)
      #expect(whole.intWrites == 1)

      model.double = .nan

      #expect(whole.int == 4)
      #expect(whole.intWrites == 1)
      #expect(text.string == "nan")
      #expect(received.count == 2)
      #expect(received.last?.isNaN == true)
      #expect(errors.errors.count == 1)
      #expect(errors.errors.allSatisfy(isConversionFailure))
    }

    @Test func anInwardAutomaticFailureKeepsTheChainValueAndTheUsersText() {
      let model = Model(int: 5)
      let field = TextField()
      let mirror = Model()
      let errors = ErrorLog()
      var sinkCalls = 0
      Bind.inout(model, \.int)
        .onError(errors.handler)
        .inout(field, \.text, on: .editingChanged)
        .inout(mirror, \.int)
        .out(key: "count") { _ in sinkCalls += 1 }
      let mirrorSets = mirror.intSets

      field.userTypes("12a")

      #expect(field.text == "12a")
      #expect(model.int == 5)
      #expect(model.intSets == 0)
      #expect(mirror.intSets == mirrorSets)
      #expect(sinkCalls == 1)
      #expect(errors.errors.count == 1)
      #expect(errors.errors.allSatisfy(isBackConversionFailure))

      field.userTypes("12")

      #expect(model.int == 12)
      #expect(mirror.int == 12)
    }

    @Test func nilIntoANonOptionalMemberFailsAndWritesNothing() {
      let model = Model()
      let plain = Plain()
      let errors = ErrorLog()
      Bind.inout(model, \.optionalInt)
        .onError(errors.handler)
        .out(plain, \.int)

      #expect(plain.intWrites == 0)
      #expect(errors.errors.count == 1)

      model.optionalInt = 5

      #expect(plain.int == 5)
      #expect(plain.intWrites == 1)

      model.optionalInt = nil

      #expect(plain.int == 5)
      #expect(plain.intWrites == 1)
      #expect(errors.errors.count == 2)
      #expect(errors.errors.allSatisfy(isConversionFailure))
    }

    @Test func nilOptionalStringIntoAStringMemberFails() {
      let model = Model()
      let plain = Plain()
      plain.string = "kept"
      plain.stringWrites = 0
      let errors = ErrorLog()
      Bind.inout(model, \.optionalString)
        .onError(errors.handler)
        .out(plain, \.string)

      #expect(plain.string == "kept")
      #expect(plain.stringWrites == 0)

      model.optionalString = "some"
      model.optionalString = nil

      #expect(plain.string == "some")
      #expect(plain.stringWrites == 1)
      #expect(errors.errors.count == 2)
      #expect(errors.errors.allSatisfy(isConversionFailure))
    }

    @Test func aNonOptionalValueWrapsIntoAnOptionalMember() {
      let model = Model(int: 7, string: "hi")
      let plain = Plain()
      Bind.inout(model, \.int).out(plain, \.optionalInt)
      Bind.inout(model, \.string).out(plain, \.optionalString)

      #expect(plain.optionalInt == .some(7))
      #expect(plain.optionalString == .some("hi"))

      model.int = 8

      #expect(plain.optionalInt == .some(8))
    }
  }

  // MARK: Automatic conversion (Docs/Semantics.md), initializer by initializer

  /// One row of the conversion table: a primitive and what a type makes of it (`nil`: failure).
  struct PrimitiveCase<Output: Equatable & Sendable>: Sendable, CustomTestStringConvertible {
    let input: BindPrimitive
    let expected: Output?

    init(_ input: BindPrimitive, _ expected: Output?) {
      self.input = input
      self.expected = expected
    }

    var testDescription: String {
      let result = expected.map { "\($0)" } ?? "fails"
      return "\(input) → \(result)"
    }
  }

  @Suite struct ConvertibleInitializers {
    @Test(arguments: [
      PrimitiveCase<String>(.int(7), "7"),
      PrimitiveCase(.int(-3), "-3"),
      PrimitiveCase(.double(0.5), "0.5"),
      PrimitiveCase(.double(-2.25), "-2.25"),
      PrimitiveCase(.float(0.25), "0.25"),
      PrimitiveCase(.bool(true), "true"),
      PrimitiveCase(.bool(false), "false"),
      PrimitiveCase(.string("as is"), "as is"),
      PrimitiveCase(.none, nil),
    ])
    func stringUsesTheDescription(_ testCase: PrimitiveCase<String>) {
      #expect(String(bindPrimitive: testCase.input) == testCase.expected)
    }

    @Test(arguments: [
      PrimitiveCase<Int>(.string("42"), 42),
      PrimitiveCase(.string(" 42 "), 42),
      PrimitiveCase(.string("\t-7\n"), -7),
      PrimitiveCase(.string("4.2"), nil),
      PrimitiveCase(.string("42abc"), nil),
      PrimitiveCase(.string(""), nil),
      PrimitiveCase(.string("   "), nil),
      PrimitiveCase(.bool(true), 1),
      PrimitiveCase(.bool(false), 0),
      PrimitiveCase(.double(2.9), 2),
      PrimitiveCase(.double(-2.9), -2),
      PrimitiveCase(.double(.nan), nil),
      PrimitiveCase(.double(.infinity), nil),
      PrimitiveCase(.double(-.infinity), nil),
      PrimitiveCase(.double(1e300), nil),
      PrimitiveCase(.float(3.7), 3),
      PrimitiveCase(.float(.nan), nil),
      PrimitiveCase(.int(5), 5),
      PrimitiveCase(.none, nil),
    ])
    func intParsesTruncatesOrFails(_ testCase: PrimitiveCase<Int>) {
      #expect(Int(bindPrimitive: testCase.input) == testCase.expected)
    }

    @Test(arguments: [
      PrimitiveCase<Double>(.string("0.5"), 0.5),
      PrimitiveCase(.string(" 0.5\n"), 0.5),
      PrimitiveCase(.string("0.5x"), nil),
      PrimitiveCase(.string(""), nil),
      // The whole string: Swift's parser alone stops at a NUL, and read "4\0x" as 4.
      PrimitiveCase(.string("4\0x"), nil),
      PrimitiveCase(.string("4\0"), nil),
      PrimitiveCase(.string(" 0.5\0 "), nil),
      PrimitiveCase(.int(3), 3),
      PrimitiveCase(.bool(true), 1),
      PrimitiveCase(.bool(false), 0),
      PrimitiveCase(.float(0.25), 0.25),
      PrimitiveCase(.none, nil),
    ])
    func doubleParsesOrConverts(_ testCase: PrimitiveCase<Double>) {
      #expect(Double(bindPrimitive: testCase.input) == testCase.expected)
    }

    @Test(arguments: [
      PrimitiveCase<Float>(.string("0.25"), 0.25),
      PrimitiveCase(.int(2), 2),
      PrimitiveCase(.double(0.5), 0.5),
      PrimitiveCase(.bool(true), 1),
      PrimitiveCase(.string("x"), nil),
      PrimitiveCase(.string("4\0x"), nil),
      PrimitiveCase(.none, nil),
    ])
    func floatParsesOrConverts(_ testCase: PrimitiveCase<Float>) {
      #expect(Float(bindPrimitive: testCase.input) == testCase.expected)
    }

    @Test(arguments: [
      PrimitiveCase<Bool>(.string("true"), true),
      PrimitiveCase(.string("false"), false),
      PrimitiveCase(.string("yes"), true),
      PrimitiveCase(.string("no"), false),
      PrimitiveCase(.string("1"), true),
      PrimitiveCase(.string("0"), false),
      PrimitiveCase(.string("TRUE"), true),
      PrimitiveCase(.string("False"), false),
      PrimitiveCase(.string("YES"), true),
      PrimitiveCase(.string("nO"), false),
      PrimitiveCase(.string("maybe"), nil),
      PrimitiveCase(.string("2"), nil),
      PrimitiveCase(.string(""), nil),
      PrimitiveCase(.int(0), false),
      PrimitiveCase(.int(1), true),
      PrimitiveCase(.int(-5), true),
      PrimitiveCase(.int(42), true),
      PrimitiveCase(.double(0), false),
      PrimitiveCase(.double(0.5), true),
      PrimitiveCase(.float(0), false),
      PrimitiveCase(.float(2), true),
      PrimitiveCase(.bool(true), true),
      PrimitiveCase(.none, nil),
    ])
    func boolAcceptsWordsAndNumbers(_ testCase: PrimitiveCase<Bool>) {
      #expect(Bool(bindPrimitive: testCase.input) == testCase.expected)
    }

    @Test func optionalWrapsAndMapsNoneToNil() throws {
      let none = try #require(Int?(bindPrimitive: .none))
      #expect(none == nil)
      let seven = try #require(Int?(bindPrimitive: .string("7")))
      #expect(seven == 7)
      #expect(Int?(bindPrimitive: .string("x")) == nil)
      let text = try #require(String?(bindPrimitive: .int(7)))
      #expect(text == "7")
    }

    @Test func valuesGiveTheirPrimitive() {
      #expect(7.bindPrimitive == .int(7))
      #expect(0.5.bindPrimitive == .double(0.5))
      #expect(Float(0.25).bindPrimitive == .float(0.25))
      #expect(true.bindPrimitive == .bool(true))
      #expect("x".bindPrimitive == .string("x"))
      #expect(Int?.none.bindPrimitive == BindPrimitive.none)
      #expect(Int?.some(7).bindPrimitive == .int(7))
    }
  }

  // MARK: Automatic conversion (Docs/Semantics.md), through chains

  /// A value set on one side of a chain and what the member of another type holds after it
  /// (`nil`: the conversion fails and nothing is written).
  struct ChainCase<Input: Sendable, Output: Sendable>: Sendable, CustomTestStringConvertible {
    let input: Input
    let expected: Output?

    init(_ input: Input, _ expected: Output?) {
      self.input = input
      self.expected = expected
    }

    var testDescription: String {
      let source = input is String ? "\"\(input)\"" : "\(input)"
      let result = expected.map { $0 is String ? "\"\($0)\"" : "\($0)" } ?? "fails"
      return "\(source) → \(result)"
    }
  }

  @Suite struct AutomaticConversionThroughChains {
    @Test(arguments: [
      ChainCase<Int, String>(7, "7"),
      ChainCase(-3, "-3"),
      ChainCase(1_000_000, "1000000"),
    ])
    func intChainWritesItsDescriptionIntoAString(_ testCase: ChainCase<Int, String>) {
      let model = Model()
      let label = Plain()
      Bind.inout(model, \.int).out(label, \.string)

      model.int = testCase.input

      #expect(label.string == testCase.expected)
    }

    @Test(arguments: [
      ChainCase<Double, String>(0.5, "0.5"),
      ChainCase(-2.25, "-2.25"),
      ChainCase(3, "3.0"),
    ])
    func doubleChainWritesItsDescriptionIntoAString(_ testCase: ChainCase<Double, String>) {
      let model = Model()
      let label = Plain()
      Bind.inout(model, \.double).out(label, \.string)

      model.double = testCase.input

      #expect(label.string == testCase.expected)
    }

    @Test(arguments: [
      ChainCase<Bool, String>(true, "true"),
      ChainCase(false, "false"),
    ])
    func boolChainWritesItsDescriptionIntoAString(_ testCase: ChainCase<Bool, String>) {
      let model = Model(bool: !testCase.input)
      let label = Plain()
      Bind.inout(model, \.bool).out(label, \.string)

      model.bool = testCase.input

      #expect(label.string == testCase.expected)
      #expect(label.stringWrites == 2)
    }

    @Test func floatChainWritesItsDescriptionIntoAString() {
      let model = Model()
      let label = Plain()
      Bind.inout(model, \.float).out(label, \.string)

      model.float = 0.25

      #expect(label.string == "0.25")
    }

    @Test(arguments: [
      ChainCase<String, Int>("42", 42),
      ChainCase(" 42 ", 42),
      ChainCase("-7", -7),
      ChainCase("4.2", nil),
      ChainCase("42abc", nil),
      ChainCase("", nil),
      ChainCase("abc", nil),
    ])
    func stringFieldIntoAnIntModel(_ testCase: ChainCase<String, Int>) throws {
      let model = Model(int: 5)
      let field = TextField()
      let errors = ErrorLog()
      Bind.inout(model, \.int)
        .onError(errors.handler)
        .inout(field, \.text, on: .editingChanged)
      #expect(field.text == "5")

      field.userTypes(testCase.input)

      if let expected = testCase.expected {
        #expect(model.int == expected)
        #expect(model.intSets == 1)
        #expect(errors.errors.isEmpty)
      } else {
        #expect(model.int == 5)
        #expect(model.intSets == 0)
        #expect(field.text == testCase.input)
        let error = try #require(errors.errors.first)
        #expect(errors.errors.count == 1)
        #expect(isBackConversionFailure(error))
      }
    }

    @Test(arguments: [
      ChainCase<String, Int>("12", 12),
      ChainCase(" 12\n", 12),
      ChainCase("1.5", nil),
      ChainCase("twelve", nil),
    ])
    func stringChainIntoAnIntMember(_ testCase: ChainCase<String, Int>) {
      let model = Model(string: "3")
      let plain = Plain()
      let errors = ErrorLog()
      Bind.inout(model, \.string)
        .onError(errors.handler)
        .out(plain, \.int)
      #expect(plain.int == 3)

      model.string = testCase.input

      if let expected = testCase.expected {
        #expect(plain.int == expected)
        #expect(errors.errors.isEmpty)
      } else {
        #expect(plain.int == 3)
        #expect(plain.intWrites == 1)
        #expect(errors.errors.count == 1)
        #expect(errors.errors.allSatisfy(isConversionFailure))
      }
    }

    @Test(arguments: [
      ChainCase<String, Bool>("true", true),
      ChainCase("false", false),
      ChainCase("yes", true),
      ChainCase("no", false),
      ChainCase("1", true),
      ChainCase("0", false),
      ChainCase("TRUE", true),
      ChainCase("No", false),
      ChainCase("yEs", true),
      ChainCase("FaLsE", false),
      ChainCase("maybe", nil),
      ChainCase("2", nil),
    ])
    func stringFieldIntoABoolModel(_ testCase: ChainCase<String, Bool>) throws {
      let start = !(testCase.expected ?? false)
      let model = Model(bool: start)
      let field = TextField()
      let errors = ErrorLog()
      Bind.inout(model, \.bool)
        .onError(errors.handler)
        .inout(field, \.text, on: .editingChanged)

      field.userTypes(testCase.input)

      if let expected = testCase.expected {
        #expect(model.bool == expected)
        #expect(model.boolSets == 1)
        #expect(errors.errors.isEmpty)
      } else {
        #expect(model.bool == start)
        #expect(model.boolSets == 0)
        #expect(field.text == testCase.input)
        let error = try #require(errors.errors.first)
        #expect(isBackConversionFailure(error))
      }
    }

    @Test(arguments: [
      ChainCase<Bool, Int>(true, 1),
      ChainCase(false, 0),
    ])
    func boolChainIntoNumberMembers(_ testCase: ChainCase<Bool, Int>) {
      let model = Model(bool: !testCase.input)
      let plain = Plain()
      Bind.inout(model, \.bool).out(plain, \.int).out(plain, \.double)

      model.bool = testCase.input

      #expect(plain.int == testCase.expected)
      #expect(plain.double == testCase.expected.map(Double.init))
    }

    @Test(arguments: [
      ChainCase<Int, Bool>(0, false),
      ChainCase(1, true),
      ChainCase(-5, true),
      ChainCase(42, true),
    ])
    func intChainIntoABoolMember(_ testCase: ChainCase<Int, Bool>) {
      let model = Model()
      let plain = Plain()
      Bind.inout(model, \.int).out(plain, \.bool)
      // Start from the opposite Boolean so the change must be written.
      plain.bool = !(testCase.expected ?? false)

      model.int = testCase.input

      #expect(plain.bool == testCase.expected)
    }

    @Test(arguments: [
      ChainCase<Double, Bool>(0, false),
      ChainCase(0.5, true),
      ChainCase(-3, true),
    ])
    func doubleChainIntoABoolMember(_ testCase: ChainCase<Double, Bool>) {
      let model = Model()
      let plain = Plain()
      Bind.inout(model, \.double).out(plain, \.bool)
      plain.bool = !(testCase.expected ?? false)

      model.double = testCase.input

      #expect(plain.bool == testCase.expected)
    }

    @Test(arguments: [
      ChainCase<Int, Bool>(0, false),
      ChainCase(1, true),
      ChainCase(7, true),
    ])
    func intMemberIntoABoolChain(_ testCase: ChainCase<Int, Bool>) {
      let toggle = Model(bool: !(testCase.expected ?? false))
      let counter = Model()
      Bind.inout(toggle, \.bool).inout(counter, \.int)
      toggle.boolSets = 0

      counter.int = testCase.input

      #expect(toggle.bool == testCase.expected)
      #expect(toggle.boolSets == 1)
    }

    @Test(arguments: [
      ChainCase<Int, Double>(3, 3),
      ChainCase(-7, -7),
    ])
    func intChainIntoDoubleAndFloatMembers(_ testCase: ChainCase<Int, Double>) {
      let model = Model()
      let plain = Plain()
      Bind.inout(model, \.int).out(plain, \.double).out(plain, \.float)

      model.int = testCase.input

      #expect(plain.double == testCase.expected)
      #expect(plain.float == testCase.expected.map(Float.init))
    }

    @Test(arguments: [
      ChainCase<Double, Int>(-2.9, -2),
      ChainCase(2.9, 2),
      ChainCase(3, 3),
      ChainCase(-0.5, 0),
      ChainCase(.nan, nil),
      ChainCase(.infinity, nil),
      ChainCase(-.infinity, nil),
      ChainCase(1e300, nil),
      ChainCase(-1e300, nil),
    ])
    func doubleChainIntoAnIntMemberTruncatesOrFails(_ testCase: ChainCase<Double, Int>) {
      let model = Model(double: 11)
      let plain = Plain()
      let errors = ErrorLog()
      Bind.inout(model, \.double)
        .onError(errors.handler)
        .out(plain, \.int)
      #expect(plain.int == 11)

      model.double = testCase.input

      if let expected = testCase.expected {
        #expect(plain.int == expected)
        #expect(plain.intWrites == 2)
        #expect(errors.errors.isEmpty)
      } else {
        #expect(plain.int == 11)
        #expect(plain.intWrites == 1)
        #expect(errors.errors.count == 1)
        #expect(errors.errors.allSatisfy(isConversionFailure))
      }
    }

    @Test(arguments: [
      ChainCase<Double, Int>(2.9, 2),
      ChainCase(-2.9, -2),
      ChainCase(.infinity, nil),
    ])
    func sliderIntoAnIntModelTruncatesOrFails(_ testCase: ChainCase<Double, Int>) {
      let model = Model(int: 11)
      let slider = Slider()
      let errors = ErrorLog()
      Bind.inout(model, \.int)
        .onError(errors.handler)
        .inout(slider, \.value, on: .valueChanged)
      #expect(slider.value == 11)

      slider.userSlides(to: testCase.input)

      if let expected = testCase.expected {
        #expect(model.int == expected)
      } else {
        #expect(model.int == 11)
        #expect(model.intSets == 0)
        #expect(slider.value == testCase.input)
        #expect(errors.errors.allSatisfy(isBackConversionFailure))
        #expect(errors.errors.count == 1)
      }
    }
  }

  // MARK: User types and same-type members

  @Suite struct UserTypes {
    @Test func aUserTypeConvertsToAndFromTheBuiltInTypes() {
      let holder = ConvertHolder()
      let label = Plain()
      let field = TextField()
      let errors = ErrorLog()
      Bind.inout(holder, \.level)
        .onError(errors.handler)
        .out(label, \.string)
        .inout(field, \.text, on: .editingChanged)
      #expect(label.string == "0")

      holder.level = .high
      #expect(label.string == "2")
      #expect(field.text == "2")

      field.userTypes("1")
      #expect(holder.level == .medium)
      #expect(label.string == "1")

      field.userTypes("9")
      #expect(holder.level == .medium)
      #expect(errors.errors.count == 1)
      #expect(errors.errors.allSatisfy(isBackConversionFailure))
    }

    @Test func aBuiltInChainConvertsIntoAUserType() {
      let model = Model(int: 1)
      let holder = ConvertHolder()
      Bind.inout(model, \.int).inout(holder, \.level)
      #expect(holder.level == .medium)

      model.int = 2
      #expect(holder.level == .high)

      holder.level = .low
      #expect(model.int == 0)
    }

    @Test func aSameTypeMemberIsCopiedNotConverted() {
      let source = ConvertHolder()
      source.tag = ConvertLossyTag(id: 1, note: "kept")
      let target = ConvertHolder()

      Bind.inout(source, \.tag).out(target, \.tag)

      #expect(target.tag == ConvertLossyTag(id: 1, note: "kept"))

      source.tag = ConvertLossyTag(id: 2, note: "still kept")

      #expect(target.tag.note == "still kept")
    }

    @Test func sameTypeBuiltInMembersBindWithoutAmbiguity() {
      let model = Model(int: 1, string: "a", bool: true, double: 0.5)
      let other = Model()
      let plain = Plain()
      Bind.inout(model, \.string).out(plain, \.string)
      Bind.inout(model, \.int).inout(other, \.int)
      Bind.inout(model, \.bool).out(plain, \.bool)
      Bind.inout(model, \.double).out(plain, \.double)
      Bind.inout(model, \.optionalString).out(plain, \.optionalString)

      #expect(plain.string == "a")
      #expect(other.int == 1)
      #expect(plain.bool == true)
      #expect(plain.double == 0.5)
      #expect(plain.optionalString == nil)
      #expect(plain.optionalStringWrites == 0)

      model.optionalString = "b"

      #expect(plain.optionalString == "b")
    }
  }
}
