import ChainBind
import Testing

// Docs/Semantics.md, "Automatic conversion" and "Failures never write defaults": random text typed
// into a field bound to a model property of every `BindConvertible` type and its optional, against
// an oracle written from the table. Accepted: the model holds the oracle's value, no error.
// Rejected: the model is unchanged and not written, exactly one `.backConversionFailed` is
// reported, naming the text. Either way the field keeps what was typed.

/// A model with a `@Bound` property of each convertible type; `writes` counts its sets.
private final class Form {
  @Bound var int = 0 { didSet { writes += 1 } }
  @Bound var double = 0.0 { didSet { writes += 1 } }
  @Bound var float: Float = 0 { didSet { writes += 1 } }
  @Bound var bool = false { didSet { writes += 1 } }
  @Bound var string = "" { didSet { writes += 1 } }
  @Bound var optionalInt: Int? = nil { didSet { writes += 1 } }
  @Bound var optionalDouble: Double? = nil { didSet { writes += 1 } }
  @Bound var optionalFloat: Float? = nil { didSet { writes += 1 } }
  @Bound var optionalBool: Bool? = nil { didSet { writes += 1 } }
  @Bound var optionalString: String? = nil { didSet { writes += 1 } }
  var writes = 0
}

/// What a text becomes in each type, or nil when it fails.
///
/// The table of Docs/Semantics.md, "Automatic conversion", for a `String` member, written from
/// the table, not from ChainBind's converters.
private enum Oracle {
  /// Without the whitespace at either end: the `Character`s whose `isWhitespace` is true.
  static func trimmed(_ text: String) -> Substring {
    var rest = Substring(text)
    while rest.first?.isWhitespace == true { rest = rest.dropFirst() }
    while rest.last?.isWhitespace == true { rest = rest.dropLast() }
    return rest
  }

  /// `Int(_:)` on the whole trimmed string.
  static func int(_ text: String) -> Int? { Int(trimmed(text)) }

  /// `Double(_:)` on the whole trimmed string; one with a NUL is no number (Swift's parser
  /// stops at it).
  static func double(_ text: String) -> Double? {
    let number = trimmed(text)
    return number.contains("\0") ? nil : Double(number)
  }

  /// `Float(_:)` on the whole trimmed string, as for `Double`.
  static func float(_ text: String) -> Float? {
    let number = trimmed(text)
    return number.contains("\0") ? nil : Float(number)
  }

  /// `true`, `yes`, `1`, `false`, `no`, `0`, in any letter case, trimmed.
  static func bool(_ text: String) -> Bool? {
    switch trimmed(text).lowercased() {
    case "true", "yes", "1": true
    case "false", "no", "0": false
    default: nil
    }
  }

  /// Into an optional: the wrapped type's value, wrapped; what fails for it fails (`""` never
  /// becomes `nil`).
  static func optional<Wrapped>(_ convert: @escaping (String) -> Wrapped?) -> (String) -> Wrapped??
  {
    { text in convert(text).map { .some($0) } }
  }
}

/// Random texts, as typed or pasted: numbers in every spelling, Boolean words, and what breaks
/// them (whitespace of every kind, zero-width characters, signs, exponents, runs of hundreds of
/// digits, digits of other scripts, NUL, combining marks), from a seed.
private struct TextFuzzer {
  var random: SplitMix64

  static let whitespace = [
    " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{1680}", "\u{2000}",
    "\u{2003}", "\u{2009}", "\u{200A}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}",
  ]
  // Not whitespace for `Character.isWhitespace`: never trimmed.
  static let zeroWidth = ["\u{200B}", "\u{200C}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{180E}"]
  static let signs = ["+", "-", "\u{2212}", "\u{FF0B}", "--", "+-"]
  static let exponents = ["e", "E", "e+", "e-", "E-", "p", "p-"]
  static let points = [".", ",", "\u{66B}"]
  static let otherDigits = ["\u{663}", "\u{969}", "\u{FF11}", "\u{1D7D9}", "\u{B2}", "\u{BD}"]
  static let words = [
    "true", "false", "yes", "no", "nan", "inf", "infinity", "0x", "0b", "nan(12)", "snan", "on",
    "y", "1", "0",
  ]
  static let edges = [
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "1e308", "1e309", "3.4028235e38", "3.5e38", "4.9e-324", "1e-400",
    "-0", "00", "0.0", "-0.0", "0x1p-2", "0x.8", "1_000",
  ]
  static let oddities = ["\0", "\u{301}", "\u{20DD}", "x", "Z", "_", "'", "\u{1F600}"]

  mutating func text() -> String {
    switch random.below(6) {
    case 0, 1: return number()
    case 2: return padded(cased(random.pick(Self.words)))
    case 3: return padded(random.pick(Self.edges))
    case 4: return mutated(random.chance(50) ? number() : cased(random.pick(Self.words)))
    default: return soup()
    }
  }

  /// A number as a user types one: sign, digits, point, exponent, any part left out, padded.
  mutating func number() -> String {
    var text = random.chance(30) ? random.pick(Self.signs) : ""
    if random.chance(90) { text += digits() }
    if random.chance(40) { text += random.pick(Self.points) + digits() }
    if random.chance(25) { text += random.pick(Self.exponents) + digits() }
    return padded(text)
  }

  /// ASCII digits: one to three mostly, sometimes 15 to 25 (around `Int`'s limits), sometimes
  /// hundreds.
  mutating func digits() -> String {
    let count =
      random.chance(80)
      ? 1 + random.below(3) : random.chance(60) ? 15 + random.below(11) : 100 + random.below(400)
    return String((0..<count).map { _ in Character(String(random.below(10))) })
  }

  /// Any letter case.
  mutating func cased(_ word: String) -> String {
    String(word.map { random.chance(50) ? Character($0.uppercased()) : $0 })
  }

  /// Whitespace at either end, sometimes.
  mutating func padded(_ text: String) -> String {
    var text = text
    if random.chance(30) { text = filler() + text }
    if random.chance(30) { text += filler() }
    return text
  }

  /// Whitespace, mostly; a zero-width character sometimes.
  mutating func filler() -> String {
    let count = 1 + random.below(3)
    return (0..<count).map { _ in
      random.chance(80) ? random.pick(Self.whitespace) : random.pick(Self.zeroWidth)
    }.joined()
  }

  /// One character inserted or replaced by a breaking one.
  mutating func mutated(_ text: String) -> String {
    var characters = text.map(String.init)
    let piece = breaker()
    let at = random.below(characters.count + 1)
    if at < characters.count && random.chance(50) {
      characters[at] = piece
    } else {
      characters.insert(piece, at: at)
    }
    return characters.joined()
  }

  mutating func breaker() -> String {
    switch random.below(6) {
    case 0: random.pick(Self.whitespace)
    case 1: random.pick(Self.zeroWidth)
    case 2: random.pick(Self.otherDigits)
    case 3: random.pick(Self.signs + Self.exponents + Self.points)
    default: random.pick(Self.oddities)
    }
  }

  /// Pieces of every kind, in any order.
  mutating func soup() -> String {
    (0..<random.below(6)).map { _ in
      random.chance(30) ? digits() : random.chance(40) ? breaker() : random.pick(Self.words)
    }.joined()
  }
}

/// Whether two values are the same: `==`, and NaN is NaN.
private func same<Value: Equatable>(_ lhs: Value, _ rhs: Value) -> Bool {
  func isNaN(_ value: Any) -> Bool {
    (value as? Double)?.isNaN ?? (value as? Float)?.isNaN ?? false
  }
  return lhs == rhs || (isNaN(lhs) && isNaN(rhs))
}

@Suite struct ConversionFuzzTests {
  /// A model property's type, bound two-way to a text field.
  enum Target: String, CaseIterable, CustomTestStringConvertible {
    case int, double, float, bool, string
    case optionalInt, optionalDouble, optionalFloat, optionalBool, optionalString

    var testDescription: String { rawValue }
  }

  static let seeds: [UInt64] = [1, 28, 0x5EED, 20_260_101]
  static let textsPerSeed = 1_500

  @Test(arguments: Target.allCases, seeds)
  func randomTextTypedIntoAField(target: Target, seed: UInt64) {
    var fuzzer = TextFuzzer(random: SplitMix64(seed: seed))
    let texts = (0..<Self.textsPerSeed).map { _ in fuzzer.text() }
    let typed = "into \(target.rawValue), seed \(seed)"
    switch target {
    case .int:
      check(texts, \.int, Oracle.int, typed) {
        Bind.inout($0, \.int).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .double:
      check(texts, \.double, Oracle.double, typed) {
        Bind.inout($0, \.double).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .float:
      check(texts, \.float, Oracle.float, typed) {
        Bind.inout($0, \.float).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .bool:
      check(texts, \.bool, Oracle.bool, typed) {
        Bind.inout($0, \.bool).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .string:
      check(texts, \.string, { $0 }, typed) {
        Bind.inout($0, \.string).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .optionalInt:
      check(texts, \.optionalInt, Oracle.optional(Oracle.int), typed) {
        Bind.inout($0, \.optionalInt).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .optionalDouble:
      check(texts, \.optionalDouble, Oracle.optional(Oracle.double), typed) {
        Bind.inout($0, \.optionalDouble).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .optionalFloat:
      check(texts, \.optionalFloat, Oracle.optional(Oracle.float), typed) {
        Bind.inout($0, \.optionalFloat).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .optionalBool:
      check(texts, \.optionalBool, Oracle.optional(Oracle.bool), typed) {
        Bind.inout($0, \.optionalBool).onError($2).inout($1, \.text, on: .editingChanged)
      }
    case .optionalString:
      check(texts, \.optionalString, { .some($0) }, typed) {
        Bind.inout($0, \.optionalString).onError($2).inout($1, \.text, on: .editingChanged)
      }
    }
  }

  /// Types each text into a field bound (by `bind`) to `keyPath` of a model, and checks the
  /// outcome against `oracle`; records at most 10 failures.
  private func check<Value: Equatable>(
    _ texts: [String], _ keyPath: KeyPath<Form, Value>, _ oracle: (String) -> Value?,
    _ typed: String, sourceLocation: SourceLocation = #_sourceLocation,
    bind: (Form, TextField, @escaping (BindingError) -> Void) -> Chain<Value>
  ) {
    let form = Form()
    let field = TextField()
    let log = ErrorLog()
    let chain = bind(form, field, log.handler)
    var failures: [String] = []
    var accepted = 0
    for text in texts {
      let before = form[keyPath: keyPath]
      let writes = form.writes
      log.errors.removeAll()
      field.userTypes(text)
      let now = form[keyPath: keyPath]
      var problems: [String] = []
      if field.text != text { problems.append("the field holds \(field.text.debugDescription)") }
      if let expected = oracle(text) {
        accepted += 1
        if !same(now, expected) { problems.append("the model holds \(now), not \(expected)") }
        if !log.errors.isEmpty { problems.append("reported \(log.errors)") }
      } else {
        if !same(now, before) || form.writes != writes {
          problems.append("rejected, but the model was written: \(now)")
        }
        if log.errors.count != 1 {
          problems.append("rejected with \(log.errors.count) errors")
        } else if case .backConversionFailed(let value, "String", _) = log.errors[0].cause,
          value == "\"\(text)\"", log.errors[0].chain == chain.code
        {
          // The report names the chain, the text and its type.
        } else {
          problems.append("rejected with \(log.errors[0])")
        }
      }
      if !problems.isEmpty {
        failures.append("\(text.debugDescription) \(typed): \(problems.joined(separator: "; "))")
      }
    }
    for failure in failures.prefix(10) {
      Issue.record("\(failure)", sourceLocation: sourceLocation)
    }
    if failures.count > 10 {
      Issue.record("and \(failures.count - 10) more", sourceLocation: sourceLocation)
    }
    // The texts reach both outcomes (a `String` accepts every text).
    if Value.self == String.self || Value.self == String?.self {
      #expect(accepted == texts.count, sourceLocation: sourceLocation)
    } else {
      #expect(accepted > 0 && accepted < texts.count, sourceLocation: sourceLocation)
    }
    chain.unbind()
  }
}
