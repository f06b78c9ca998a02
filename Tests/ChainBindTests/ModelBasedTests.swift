import ChainBind
import Foundation
import Testing

// Model-based randomized test: random operation sequences run against the library and against a
// reference model of Docs/Semantics.md for a small world, and every observable
// state is compared after every step.
//
// The world: 4 model objects (`@Bound var value: Int`, `@Bound var text: String`), 3 plain
// objects (same properties, not observable) and 2 text fields (a control whose user edits send
// `.editingChanged`); at most 6 chains, keyed sinks "a" and "b". Operations: start or join a
// chain, add (join in place, move) members with every role and with automatic or closure
// conversion, filters, sinks, @Bound sets, user edits, programmatic sets, the three unbinds and
// deallocation. Checked after every step: every live property's value, every write (which
// property, in order: equal values are not written, the head is not written at creation), every
// sink call (value and order), every reported error cause (in order), and for every chain
// handle `isActive` before and after `memberCount` (which prunes) and `memberCount` itself, and
// `Bind.activeChainCount`, inside an isolated registry.
//
// Not covered here (tested elsewhere): re-entrancy (sinks, filters and setters never touch a
// chain), threads, negation and the other value types.
//
// Environment: CHAINBIND_MODEL_SEQUENCES (default 10000), CHAINBIND_MODEL_STEPS (default 50),
// CHAINBIND_MODEL_SEED (replays one sequence; the seed is in every failure message).

@Suite struct ModelBasedTests {
  // Sequence i runs seed SplitMix64(seed: i).next(), in shard i % 2 (the shards run in parallel).
  @Test(arguments: 0..<2)
  func randomOperationSequencesMatchTheModel(shard: Int) {
    let environment = ProcessInfo.processInfo.environment
    let steps = environment["CHAINBIND_MODEL_STEPS"].flatMap { Int($0) } ?? 50
    if let text = environment["CHAINBIND_MODEL_SEED"] {
      guard shard == 0 else { return }
      guard let seed = UInt64(text) else {
        Issue.record("CHAINBIND_MODEL_SEED=\(text) is not a decimal UInt64")
        return
      }
      if let failure = ModelRun.run(seed: seed, steps: steps) {
        Issue.record(Comment(rawValue: failure))
      }
      return
    }
    let sequences = environment["CHAINBIND_MODEL_SEQUENCES"].flatMap { Int($0) } ?? 10_000
    var failures = 0
    for index in stride(from: shard, to: sequences, by: 2) {
      var seeds = SplitMix64(seed: UInt64(index))
      if let failure = ModelRun.run(seed: seeds.next(), steps: steps) {
        Issue.record(Comment(rawValue: failure))
        failures += 1
        // A few distinct failures are enough to diagnose; the rest would repeat them.
        if failures == 3 { break }
      }
    }
  }

  @Test(arguments: [1, 2, 3, 42, 2024, 31_337, 0xC0FF_EE00] as [UInt64])
  func fixedSeedMatchesTheModel(seed: UInt64) {
    if let failure = ModelRun.run(seed: seed, steps: 120) {
      Issue.record(Comment(rawValue: failure))
    }
  }

  @Test func sameSeedGivesTheSameOperations() {
    #expect(ModelRun.operations(seed: 7, steps: 60) == ModelRun.operations(seed: 7, steps: 60))
    #expect(ModelRun.operations(seed: 7, steps: 60) != ModelRun.operations(seed: 8, steps: 60))
  }
}

// MARK: - Random numbers

// MARK: - The world's objects

// Every write of every property of the world, in order (Docs/Semantics.md, "Propagation": members
// are written in the order added, before the sinks).
private final class WriteLog {
  var entries: [String] = []
}

private final class ModelObject {
  let name: String
  let log: WriteLog
  @Bound var value = 0 { didSet { log.entries.append("\(name).value") } }
  @Bound var text = "" { didSet { log.entries.append("\(name).text") } }

  init(_ name: String, log: WriteLog, value: Int, text: String) {
    self.name = name
    self.log = log
    self.value = value
    self.text = text
    log.entries = []
  }
}

private final class PlainObject {
  let name: String
  let log: WriteLog
  var value = 0 { didSet { log.entries.append("\(name).value") } }
  var text = "" { didSet { log.entries.append("\(name).text") } }

  init(_ name: String, log: WriteLog, value: Int, text: String) {
    self.name = name
    self.log = log
    self.value = value
    self.text = text
    log.entries = []
  }
}

private final class FieldObject: ControlEventSource {
  enum Event { case editingChanged }
  let controlEvents = ControlEvents<Event>()
  let name: String
  let log: WriteLog
  var text = "" { didSet { log.entries.append("\(name).text") } }

  init(_ name: String, log: WriteLog, text: String) {
    self.name = name
    self.log = log
    self.text = text
    log.entries = []
  }

  func userTypes(_ newText: String) {
    text = newText
    controlEvents.send(.editingChanged)
  }
}

// MARK: - Vocabulary shared by the model and the runner

private enum ObjectRef: Hashable, CustomStringConvertible {
  case model(Int)
  case plain(Int)
  case field(Int)

  static let all: [ObjectRef] =
    (0..<4).map(ObjectRef.model) + (0..<3).map(ObjectRef.plain) + (0..<2).map(ObjectRef.field)

  var description: String {
    switch self {
    case .model(let index): return "m\(index)"
    case .plain(let index): return "p\(index)"
    case .field(let index): return "f\(index)"
    }
  }

  var properties: [PropertyRef] {
    switch self {
    case .model, .plain:
      return [PropertyRef(object: self, isText: false), PropertyRef(object: self, isText: true)]
    case .field: return [PropertyRef(object: self, isText: true)]
    }
  }

  // @Bound and control objects unbind eagerly when deallocated; plain ones are pruned lazily.
  var unbindsEagerly: Bool {
    if case .plain = self { return false }
    return true
  }
}

private enum ValueType {
  case int
  case string
}

private struct PropertyRef: Hashable, CustomStringConvertible {
  let object: ObjectRef
  let isText: Bool

  var type: ValueType { isText ? .string : .int }
  var description: String { "\(object).\(isText ? "text" : "value")" }
}

private enum MValue: Hashable, CustomStringConvertible {
  case int(Int)
  case string(String)

  var description: String {
    switch self {
    case .int(let value): return "\(value)"
    case .string(let value): return "\"\(value)\""
    }
  }
}

private enum Role: CustomStringConvertible {
  case `in`
  case out
  case `inout`

  var sends: Bool { self != .out }
  var receives: Bool { self != .in }
  var description: String {
    switch self {
    case .in: return "in"
    case .out: return "out"
    case .inout: return "inout"
    }
  }
}

private enum Operation: Equatable, CustomStringConvertible {
  // Bind.in / Bind.inout; a field is bound `on: .editingChanged` when `onEvent`.
  case start(PropertyRef, Role, onEvent: Bool)
  // `.in` / `.out` / `.inout`; `custom` uses `convert:` / `back:` (the form the role allows).
  case add(chain: Int, PropertyRef, Role, custom: Bool, onEvent: Bool)
  case filter(chain: Int, index: Int)
  case addSink(chain: Int, key: String, id: Int)
  case removeSink(chain: Int, key: String)
  // A set of a @Bound property: a change.
  case set(PropertyRef, MValue)
  // The user edits a field: a change.
  case userEdit(field: Int, String)
  // A set of a plain or control property: not a change.
  case programmaticSet(PropertyRef, MValue)
  case unbindObject(ObjectRef)
  case unbindProperty(PropertyRef)
  case unbindCode(chain: Int)
  case unbindHandle(chain: Int)
  case deallocate(ObjectRef)

  var description: String {
    switch self {
    case .start(let property, let role, let onEvent):
      return "Bind.\(role)(\(property)\(onEvent ? ", on:" : ""))"
    case .add(let chain, let property, let role, let custom, let onEvent):
      let conversion = custom ? (role == .in ? ", back:" : ", convert:") : ""
      return "#\(chain).\(role)(\(property)\(onEvent ? ", on:" : "")\(conversion))"
    case .filter(let chain, let index): return "#\(chain).filter(\(Fixed.filterNames[index]))"
    case .addSink(let chain, let key, let id):
      return "#\(chain).out(key: \"\(key)\") [sink \(id)]"
    case .removeSink(let chain, let key): return "#\(chain).removeOut(key: \"\(key)\")"
    case .set(let property, let value): return "\(property) = \(value)"
    case .userEdit(let field, let text): return "f\(field).userTypes(\"\(text)\")"
    case .programmaticSet(let property, let value): return "\(property) = \(value) (plain set)"
    case .unbindObject(let object): return "Bind.unbind(\(object))"
    case .unbindProperty(let property): return "Bind.unbind(\(property))"
    case .unbindCode(let chain): return "Bind.unbind(#\(chain).code)"
    case .unbindHandle(let chain): return "#\(chain).unbind()"
    case .deallocate(let object): return "deallocate \(object)"
    }
  }
}

// A conversion pair used both by the library (as `convert:` / `back:`) and by the model.
private struct ConversionPair<Value, Target> {
  let convert: (Value) -> Target
  let back: (Target) -> Value?
}

// The fixed conversions, filters and value domains.
private enum Fixed {
  static var intToInt: ConversionPair<Int, Int> {
    ConversionPair(convert: { $0 * 2 }, back: { $0 % 2 == 0 ? $0 / 2 : nil })
  }
  static var intToString: ConversionPair<Int, String> {
    ConversionPair(convert: { "#\($0)" }, back: { $0.hasPrefix("#") ? Int($0.dropFirst()) : nil })
  }
  static var stringToString: ConversionPair<String, String> {
    ConversionPair(
      convert: { "<\($0)>" },
      back: { text in
        guard text.count >= 2, text.hasPrefix("<"), text.hasSuffix(">") else { return nil }
        return String(text.dropFirst().dropLast())
      })
  }
  static var stringToInt: ConversionPair<String, Int> {
    ConversionPair(
      convert: { $0.count },
      back: { (0...5).contains($0) ? String(repeating: "z", count: $0) : nil })
  }

  static let filterNames = [
    "$0 >= 0 / $0.count <= 3", "$0 % 7 != 3 / !$0.contains(\"x\")",
    "$0 < 15 / $0 != \"abc\"",
  ]
  static func intFilter(_ index: Int) -> (Int) -> Bool {
    switch index {
    case 0: return { $0 >= 0 }
    case 1: return { $0 % 7 != 3 }
    default: return { $0 < 15 }
    }
  }
  static func stringFilter(_ index: Int) -> (String) -> Bool {
    switch index {
    case 0: return { $0.count <= 3 }
    case 1: return { !$0.contains("x") }
    default: return { $0 != "abc" }
    }
  }

  static let texts = [
    "", "0", "3", "7", "10", "-2", "abc", "x", "12a", " 5", "#4", "#-1", "<ab>", "<>", "zz", "1234",
  ]
  static func randomInt(_ random: inout SplitMix64) -> Int { random.below(21) - 3 }
  static func randomValue(of type: ValueType, _ random: inout SplitMix64) -> MValue {
    switch type {
    case .int: return .int(randomInt(&random))
    case .string: return .string(random.pick(texts))
    }
  }

  // Docs/Semantics.md, "Automatic conversion": String -> Int parses the whole string after trimming
  // whitespace.
  static func parseInt(_ text: String) -> Int? {
    var trimmed = Substring(text)
    while trimmed.first?.isWhitespace == true { trimmed.removeFirst() }
    while trimmed.last?.isWhitespace == true { trimmed.removeLast() }
    return Int(trimmed)
  }

  // Chain value -> member value: identity, automatic (Docs/Semantics.md, "Automatic conversion") or
  // `convert:`.
  static func toMember(_ value: MValue, _ type: ValueType, custom: Bool) -> MValue? {
    switch (value, type, custom) {
    case (.int(let number), .int, false): return .int(number)
    case (.int(let number), .string, false): return .string(number.description)
    case (.string(let text), .string, false): return .string(text)
    case (.string(let text), .int, false): return parseInt(text).map(MValue.int)
    case (.int(let number), .int, true): return .int(intToInt.convert(number))
    case (.int(let number), .string, true): return .string(intToString.convert(number))
    case (.string(let text), .string, true): return .string(stringToString.convert(text))
    case (.string(let text), .int, true): return .int(stringToInt.convert(text))
    }
  }

  // Member value -> chain value: identity, automatic or `back:` (nil is a failure).
  static func toChain(_ value: MValue, _ type: ValueType, custom: Bool) -> MValue? {
    switch (value, type, custom) {
    case (.int(let number), .int, false): return .int(number)
    case (.int(let number), .string, false): return .string(number.description)
    case (.string(let text), .string, false): return .string(text)
    case (.string(let text), .int, false): return parseInt(text).map(MValue.int)
    case (.int(let number), .int, true): return intToInt.back(number).map(MValue.int)
    case (.string(let text), .int, true): return intToString.back(text).map(MValue.int)
    case (.string(let text), .string, true): return stringToString.back(text).map(MValue.string)
    case (.int(let number), .string, true): return stringToInt.back(number).map(MValue.string)
    }
  }

  static func accepts(_ index: Int, _ value: MValue) -> Bool {
    switch value {
    case .int(let number): return intFilter(index)(number)
    case .string(let text): return stringFilter(index)(text)
    }
  }
}

// MARK: - The reference model

// Docs/Semantics.md ("Chains and members" to "Lifetime") for this world, written independently of
// the library's implementation.
private struct ReferenceModel {
  struct Member {
    let id: Int
    let property: PropertyRef
    var role: Role
    // How the member is written and how it sends: through the closures (`true`), the plain or
    // automatic overloads (`false`), or not at all (`nil`). Each comes from the last addition of
    // the property that gave one (Docs/Semantics.md, "Join and move").
    var writeCustom: Bool?
    var sendCustom: Bool?

    init(id: Int, property: PropertyRef, role: Role, custom: Bool) {
      self.id = id
      self.property = property
      self.role = role
      // Docs/Semantics.md, "What is observable" and "Details and limits": an `in` member with
      // only `back:` cannot receive, not even a revert; an `out` member with only `convert:`
      // cannot send.
      writeCustom = custom && role == .in ? nil : custom
      sendCustom = custom && role == .out ? nil : custom
    }

    var canReceive: Bool { writeCustom != nil }
  }

  struct ChainState {
    let type: ValueType
    var isActive = true
    var current: MValue
    var members: [Member] = []
    var filters: [Int] = []
    var sinks: [(key: String, id: Int)] = []
  }

  enum StartOutcome {
    case joined(Int)
    case created(Int)
  }

  var values: [PropertyRef: MValue] = [:]
  var writeLog: [String] = []
  var alive = Set(ObjectRef.all)
  var chains: [ChainState] = []
  var sinkCalls: [String] = []
  var errors: [String] = []
  private var nextMemberID = 0

  var activeChainCount: Int { chains.count(where: { $0.isActive }) }

  func value(_ property: PropertyRef) -> MValue {
    values[property] ?? .int(.min)
  }

  // "Chains and members": each (object, key path) belongs to at most one chain.
  func membership(of property: PropertyRef) -> (chain: Int, index: Int)? {
    for (chain, state) in chains.enumerated() where state.isActive {
      if let index = state.members.firstIndex(where: { $0.property == property }) {
        return (chain, index)
      }
    }
    return nil
  }

  // "What is observable": @Bound properties, and controls bound with `on:`.
  func isObservable(_ property: PropertyRef, onEvent: Bool) -> Bool {
    switch property.object {
    case .model: return true
    case .field: return onEvent
    case .plain: return false
    }
  }

  mutating func write(_ property: PropertyRef, _ value: MValue) {
    values[property] = value
    writeLog.append(property.description)
  }

  // "Lifetime": a released chain loses its members, filters and sinks.
  mutating func release(_ chain: Int) {
    guard chains[chain].isActive else { return }
    chains[chain].isActive = false
    chains[chain].members = []
    chains[chain].filters = []
    chains[chain].sinks = []
  }

  // "Lifetime" and "Details and limits": released when its last sender leaves, or when no member is
  // left (a chain that never had a sender stays while it has members).
  mutating func removeMember(chain: Int, at index: Int) {
    let removed = chains[chain].members.remove(at: index)
    let members = chains[chain].members
    if members.isEmpty || (removed.role.sends && !members.contains { $0.role.sends }) {
      release(chain)
    }
  }

  // "Lifetime": members whose (plain) objects are gone leave when their chain is touched.
  mutating func prune(_ chain: Int) {
    var index = 0
    while chains[chain].isActive, index < chains[chain].members.count {
      if alive.contains(chains[chain].members[index].property.object) {
        index += 1
      } else {
        removeMember(chain: chain, at: index)
      }
    }
  }

  mutating func detach(_ property: PropertyRef) {
    guard let (chain, index) = membership(of: property) else { return }
    removeMember(chain: chain, at: index)
    if chains[chain].isActive { prune(chain) }
  }

  // "Propagation", "Failures never write defaults": convert; a failure skips the member; an equal value is not written.
  mutating func receive(_ member: Member, _ value: MValue) {
    guard member.canReceive, alive.contains(member.property.object) else { return }
    guard let custom = member.writeCustom,
      let converted = Fixed.toMember(value, member.property.type, custom: custom)
    else {
      errors.append("conversionFailed")
      return
    }
    if self.value(member.property) == converted { return }
    write(member.property, converted)
  }

  // "Join and move": join, new chain (and move); "Initial sync" (the head is not written).
  mutating func start(_ property: PropertyRef, _ role: Role, onEvent: Bool) -> StartOutcome {
    if let (chain, _) = membership(of: property), chains[chain].type == property.type {
      add(chain: chain, property, role, custom: false, onEvent: onEvent)
      return .joined(chain)
    }
    chains.append(ChainState(type: property.type, current: value(property)))
    let chain = chains.count - 1
    attach(chain: chain, property, role, custom: false, onEvent: onEvent, isHead: true)
    return .created(chain)
  }

  mutating func add(
    chain: Int, _ property: PropertyRef, _ role: Role, custom: Bool, onEvent: Bool
  ) {
    guard chains[chain].isActive else {
      errors.append("chainInactive")
      return
    }
    prune(chain)
    attach(chain: chain, property, role, custom: custom, onEvent: onEvent, isHead: false)
  }

  private mutating func attach(
    chain: Int, _ property: PropertyRef, _ requested: Role, custom: Bool, onEvent: Bool,
    isHead: Bool
  ) {
    nextMemberID += 1
    var member = Member(id: nextMemberID, property: property, role: requested, custom: custom)
    // "Join and move": a property added again to its own chain keeps its conversions where the new
    // addition gives none.
    let previous = membership(of: property).flatMap { $0.chain == chain ? $0.index : nil }
      .map { chains[chain].members[$0] }
    // A control member that sends keeps its events when added again without `on:`; how it
    // sends is, like how it is written, the conversion given last (Docs/Semantics.md, "Join and
    // move"): a control's events then send what the new conversion makes of the control's value.
    let carried =
      previous.map { $0.role.sends } ?? false && !isObservable(property, onEvent: onEvent)
    member.writeCustom = member.writeCustom ?? previous?.writeCustom
    member.sendCustom = member.sendCustom ?? previous?.sendCustom
    let observable = isObservable(property, onEvent: onEvent) || carried
    if requested.sends && !observable {
      // "What is observable": reported at bind time (a new chain's head reports to the fallback handler, which
      // this test does not watch); the member still receives when it can.
      if !isHead {
        errors.append(member.canReceive ? "notObservable" : "notObservable, not bound")
      }
      guard member.canReceive else { return }
      member.role = .out
    }
    guard chains[chain].isActive else {
      errors.append("chainInactive")
      return
    }
    if let previous {
      // "Join and move": the roles unite; a control keeps the events it sent on.
      member.role = previous.role == member.role ? member.role : .inout
    }
    if let (oldChain, index) = membership(of: property) {
      if oldChain == chain {
        // Re-added in place: same position.
        let old = chains[chain].members[index]
        chains[chain].members[index] = member
        if old.role.sends && !chains[chain].members.contains(where: { $0.role.sends }) {
          release(chain)
          return
        }
      } else {
        // Moved: the old membership is gone.
        removeMember(chain: oldChain, at: index)
        chains[chain].members.append(member)
        if chains[oldChain].isActive { prune(oldChain) }
      }
    } else {
      chains[chain].members.append(member)
    }
    if member.role.receives && !isHead { receive(member, chains[chain].current) }
  }

  // "Propagation" and "Failures never write defaults": a change from a sending member.
  mutating func change(from property: PropertyRef, raw: MValue) {
    guard let (chain, index) = membership(of: property) else { return }
    let origin = chains[chain].members[index]
    guard origin.role.sends else { return }
    let state = chains[chain]
    guard let custom = origin.sendCustom, let value = Fixed.toChain(raw, state.type, custom: custom)
    else {
      errors.append("backConversionFailed")
      return
    }
    if state.filters.contains(where: { !Fixed.accepts($0, value) }) {
      receive(origin, state.current)  // the revert, not a change
      return
    }
    chains[chain].current = value
    for member in state.members where member.id != origin.id && member.role.receives {
      receive(member, value)
    }
    for sink in state.sinks { sinkCalls.append("sink \(sink.id) <- \(value)") }
  }

  mutating func addFilter(chain: Int, _ index: Int) {
    guard chains[chain].isActive else {
      errors.append("chainInactive")
      return
    }
    chains[chain].filters.append(index)
  }

  mutating func addSink(chain: Int, key: String, id: Int) {
    guard chains[chain].isActive else {
      errors.append("chainInactive")
      return
    }
    chains[chain].sinks.removeAll { $0.key == key }
    chains[chain].sinks.append((key, id))
    sinkCalls.append("sink \(id) <- \(chains[chain].current)")
  }

  mutating func removeSink(chain: Int, key: String) {
    chains[chain].sinks.removeAll { $0.key == key }
  }

  mutating func unbind(_ object: ObjectRef) {
    for property in object.properties { detach(property) }
  }

  mutating func deallocate(_ object: ObjectRef) {
    alive.remove(object)
    if object.unbindsEagerly { unbind(object) }
  }

  // `memberCount` prunes first.
  mutating func memberCount(_ chain: Int) -> Int {
    if chains[chain].isActive { prune(chain) }
    return chains[chain].members.count
  }
}

// MARK: - The library side

private final class Recorder {
  var sinkCalls: [String] = []
  var errors: [String] = []

  func record(_ error: BindingError) {
    switch error.cause {
    case .notObservable:
      let bound = !error.description.hasSuffix("it was not bound")
      errors.append(bound ? "notObservable" : "notObservable, not bound")
    case .conversionFailed: errors.append("conversionFailed")
    case .backConversionFailed: errors.append("backConversionFailed")
    case .chainInactive: errors.append("chainInactive")
    case .headNotBound: errors.append("headNotBound")
    case .isolationMismatch: errors.append("isolationMismatch")
    case .feedbackLoop: errors.append("feedbackLoop")
    }
  }
}

private enum ChainHandle {
  case int(Chain<Int>)
  case string(Chain<String>)

  var code: ChainCode {
    switch self {
    case .int(let chain): return chain.code
    case .string(let chain): return chain.code
    }
  }

  var isActive: Bool {
    switch self {
    case .int(let chain): return chain.isActive
    case .string(let chain): return chain.isActive
    }
  }

  var memberCount: Int {
    switch self {
    case .int(let chain): return chain.memberCount
    case .string(let chain): return chain.memberCount
    }
  }

  func reportErrors(to recorder: Recorder) {
    switch self {
    case .int(let chain): chain.onError { recorder.record($0) }
    case .string(let chain): chain.onError { recorder.record($0) }
    }
  }

  func filter(_ index: Int) {
    switch self {
    case .int(let chain): chain.filter(Fixed.intFilter(index))
    case .string(let chain): chain.filter(Fixed.stringFilter(index))
    }
  }

  func addSink(key: String, id: Int, recorder: Recorder) {
    switch self {
    case .int(let chain):
      chain.out(key: key) { recorder.sinkCalls.append("sink \(id) <- \(MValue.int($0))") }
    case .string(let chain):
      chain.out(key: key) { recorder.sinkCalls.append("sink \(id) <- \(MValue.string($0))") }
    }
  }

  func removeSink(key: String) {
    switch self {
    case .int(let chain): chain.removeOut(key: key)
    case .string(let chain): chain.removeOut(key: key)
    }
  }

  func unbind() {
    switch self {
    case .int(let chain): chain.unbind()
    case .string(let chain): chain.unbind()
    }
  }
}

// Adds a member with the overload the role, conversion and types call for.
private enum Attach {
  // Member of the chain's type: the plain overloads (identity), or the closure forms.
  static func same<Object: AnyObject, Value>(
    _ chain: Chain<Value>, _ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>,
    _ role: Role, custom: Bool, _ pair: ConversionPair<Value, Value>
  ) {
    switch (role, custom) {
    case (.inout, false): chain.inout(object, keyPath)
    case (.in, false): chain.in(object, keyPath)
    case (.out, false): chain.out(object, keyPath)
    case (.inout, true): chain.inout(object, keyPath, convert: pair.convert, back: pair.back)
    case (.in, true): chain.in(object, keyPath, back: pair.back)
    case (.out, true): chain.out(object, keyPath, convert: pair.convert)
    }
  }

  // Member of another type: automatic conversion (the disfavored overloads), or closures.
  static func other<Object: AnyObject, Value: BindConvertible, Target: BindConvertible>(
    _ chain: Chain<Value>, _ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Target>,
    _ role: Role, custom: Bool, _ pair: ConversionPair<Value, Target>
  ) {
    switch (role, custom) {
    case (.inout, false): chain.inout(object, keyPath)
    case (.in, false): chain.in(object, keyPath)
    case (.out, false): chain.out(object, keyPath)
    case (.inout, true): chain.inout(object, keyPath, convert: pair.convert, back: pair.back)
    case (.in, true): chain.in(object, keyPath, back: pair.back)
    case (.out, true): chain.out(object, keyPath, convert: pair.convert)
    }
  }

  // A field's text bound `on: .editingChanged`, in a String chain.
  static func field(
    _ chain: Chain<String>, _ field: FieldObject, _ role: Role, custom: Bool,
    _ pair: ConversionPair<String, String>
  ) {
    let keyPath = \FieldObject.text
    switch (role, custom) {
    case (.inout, false): chain.inout(field, keyPath, on: .editingChanged)
    case (.in, false): chain.in(field, keyPath, on: .editingChanged)
    case (.out, false): chain.out(field, keyPath)
    case (.inout, true):
      chain.inout(
        field, keyPath, on: .editingChanged, convert: pair.convert, back: pair.back)
    case (.in, true): chain.in(field, keyPath, on: .editingChanged, back: pair.back)
    case (.out, true): chain.out(field, keyPath, convert: pair.convert)
    }
  }

  // A field's text bound `on: .editingChanged`, in an Int chain (automatic conversion).
  static func field(
    _ chain: Chain<Int>, _ field: FieldObject, _ role: Role, custom: Bool,
    _ pair: ConversionPair<Int, String>
  ) {
    let keyPath = \FieldObject.text
    switch (role, custom) {
    case (.inout, false): chain.inout(field, keyPath, on: .editingChanged)
    case (.in, false): chain.in(field, keyPath, on: .editingChanged)
    case (.out, false): chain.out(field, keyPath)
    case (.inout, true):
      chain.inout(
        field, keyPath, on: .editingChanged, convert: pair.convert, back: pair.back)
    case (.in, true): chain.in(field, keyPath, on: .editingChanged, back: pair.back)
    case (.out, true): chain.out(field, keyPath, convert: pair.convert)
    }
  }

  static func head<Object: AnyObject, Value>(
    _ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>, _ role: Role
  ) -> Chain<Value> {
    role == .in ? Bind.in(object, keyPath) : Bind.inout(object, keyPath)
  }
}

// The library's world: the objects (the only strong references to them) and the chain handles.
private final class LibraryWorld {
  var models: [ModelObject?]
  var plains: [PlainObject?]
  var fields: [FieldObject?]
  var handles: [ChainHandle] = []
  let recorder = Recorder()
  let log = WriteLog()

  init(_ model: ReferenceModel) {
    func int(_ object: ObjectRef) -> Int {
      guard case .int(let value) = model.value(PropertyRef(object: object, isText: false)) else {
        return 0
      }
      return value
    }
    func text(_ object: ObjectRef) -> String {
      guard case .string(let value) = model.value(PropertyRef(object: object, isText: true))
      else { return "" }
      return value
    }
    let log = log
    models = (0..<4).map { index in
      let object = ObjectRef.model(index)
      return ModelObject("\(object)", log: log, value: int(object), text: text(object))
    }
    plains = (0..<3).map { index in
      let object = ObjectRef.plain(index)
      return PlainObject("\(object)", log: log, value: int(object), text: text(object))
    }
    fields = (0..<2).map { FieldObject("\(ObjectRef.field($0))", log: log, text: text(.field($0))) }
  }

  private func model(_ index: Int) -> ModelObject {
    guard let object = models[index] else { preconditionFailure("m\(index) is deallocated") }
    return object
  }

  private func plain(_ index: Int) -> PlainObject {
    guard let object = plains[index] else { preconditionFailure("p\(index) is deallocated") }
    return object
  }

  private func field(_ index: Int) -> FieldObject {
    guard let object = fields[index] else { preconditionFailure("f\(index) is deallocated") }
    return object
  }

  // The property's value, or nil when its object is gone.
  func read(_ property: PropertyRef) -> MValue? {
    switch property.object {
    case .model(let index):
      guard let object = models[index] else { return nil }
      return property.isText ? .string(object.text) : .int(object.value)
    case .plain(let index):
      guard let object = plains[index] else { return nil }
      return property.isText ? .string(object.text) : .int(object.value)
    case .field(let index):
      guard let object = fields[index] else { return nil }
      return .string(object.text)
    }
  }

  func start(_ property: PropertyRef, _ role: Role, onEvent: Bool) -> ChainHandle {
    switch property.object {
    case .model(let index):
      let object = model(index)
      return property.isText
        ? .string(Attach.head(object, \ModelObject.text, role))
        : .int(Attach.head(object, \ModelObject.value, role))
    case .plain(let index):
      let object = plain(index)
      return property.isText
        ? .string(Attach.head(object, \PlainObject.text, role))
        : .int(Attach.head(object, \PlainObject.value, role))
    case .field(let index):
      let object = field(index)
      guard onEvent else { return .string(Attach.head(object, \FieldObject.text, role)) }
      return .string(
        role == .in
          ? Bind.in(object, \FieldObject.text, on: .editingChanged)
          : Bind.inout(object, \FieldObject.text, on: .editingChanged))
    }
  }

  func add(chain: Int, _ property: PropertyRef, _ role: Role, custom: Bool, onEvent: Bool) {
    switch handles[chain] {
    case .int(let chain):
      switch property.object {
      case .model(let index):
        let object = model(index)
        if property.isText {
          Attach.other(chain, object, \.text, role, custom: custom, Fixed.intToString)
        } else {
          Attach.same(chain, object, \.value, role, custom: custom, Fixed.intToInt)
        }
      case .plain(let index):
        let object = plain(index)
        if property.isText {
          Attach.other(chain, object, \.text, role, custom: custom, Fixed.intToString)
        } else {
          Attach.same(chain, object, \.value, role, custom: custom, Fixed.intToInt)
        }
      case .field(let index):
        let object = field(index)
        if onEvent {
          Attach.field(chain, object, role, custom: custom, Fixed.intToString)
        } else {
          Attach.other(chain, object, \.text, role, custom: custom, Fixed.intToString)
        }
      }
    case .string(let chain):
      switch property.object {
      case .model(let index):
        let object = model(index)
        if property.isText {
          Attach.same(chain, object, \.text, role, custom: custom, Fixed.stringToString)
        } else {
          Attach.other(chain, object, \.value, role, custom: custom, Fixed.stringToInt)
        }
      case .plain(let index):
        let object = plain(index)
        if property.isText {
          Attach.same(chain, object, \.text, role, custom: custom, Fixed.stringToString)
        } else {
          Attach.other(chain, object, \.value, role, custom: custom, Fixed.stringToInt)
        }
      case .field(let index):
        let object = field(index)
        if onEvent {
          Attach.field(chain, object, role, custom: custom, Fixed.stringToString)
        } else {
          Attach.same(chain, object, \.text, role, custom: custom, Fixed.stringToString)
        }
      }
    }
  }

  func set(_ property: PropertyRef, _ value: MValue) {
    switch (property.object, value) {
    case (.model(let index), .int(let number)): model(index).value = number
    case (.model(let index), .string(let text)): model(index).text = text
    case (.plain(let index), .int(let number)): plain(index).value = number
    case (.plain(let index), .string(let text)): plain(index).text = text
    case (.field(let index), .string(let text)): field(index).text = text
    case (.field, .int): preconditionFailure("a field has no Int property")
    }
  }

  func userEdit(field index: Int, _ text: String) {
    field(index).userTypes(text)
  }

  func unbind(_ object: ObjectRef) {
    switch object {
    case .model(let index): Bind.unbind(model(index))
    case .plain(let index): Bind.unbind(plain(index))
    case .field(let index): Bind.unbind(field(index))
    }
  }

  func unbind(_ property: PropertyRef) {
    switch property.object {
    case .model(let index):
      if property.isText {
        Bind.unbind(model(index), \.text)
      } else {
        Bind.unbind(model(index), \.value)
      }
    case .plain(let index):
      if property.isText {
        Bind.unbind(plain(index), \.text)
      } else {
        Bind.unbind(plain(index), \.value)
      }
    case .field(let index): Bind.unbind(field(index), \.text)
    }
  }

  // Drops the only strong reference; returns whether the object really went away.
  func deallocate(_ object: ObjectRef) -> Bool {
    switch object {
    case .model(let index):
      weak let weakObject = models[index]
      models[index] = nil
      return weakObject == nil
    case .plain(let index):
      weak let weakObject = plains[index]
      plains[index] = nil
      return weakObject == nil
    case .field(let index):
      weak let weakObject = fields[index]
      fields[index] = nil
      return weakObject == nil
    }
  }
}

// MARK: - Running a sequence

private enum ModelRun {
  static let maxChains = 6

  // Runs one sequence in a registry of its own; returns a failure report, or nil.
  static func run(seed: UInt64, steps: Int) -> String? {
    withIsolatedRegistry { runIsolated(seed: seed, steps: steps).failure }
  }

  // The operations a seed generates (for the determinism check).
  static func operations(seed: UInt64, steps: Int) -> [Operation] {
    withIsolatedRegistry { runIsolated(seed: seed, steps: steps).operations }
  }

  private static func runIsolated(
    seed: UInt64, steps: Int
  ) -> (failure: String?, operations: [Operation]) {
    var random = SplitMix64(seed: seed)
    // One sequence in 32 may start chains from properties that cannot send ("What is observable" and "Details
    // and limits"); each such head reports one error line to the fallback handler (stderr).
    let allowsUnobservableHeads = random.below(32) == 0
    var model = ReferenceModel()
    for object in ObjectRef.all {
      for property in object.properties {
        model.values[property] = Fixed.randomValue(of: property.type, &random)
      }
    }
    let world = LibraryWorld(model)
    // Chains left active would keep this isolated registry alive (chain -> registry -> chain).
    defer { for handle in world.handles { handle.unbind() } }
    var operations: [Operation] = []
    var nextSinkID = 0
    for step in 0..<steps {
      let operation = nextOperation(
        &random, model: model, nextSinkID: &nextSinkID,
        allowsUnobservableHeads: allowsUnobservableHeads)
      operations.append(operation)
      var problems = apply(operation, to: world, and: &model)
      problems += compare(world, with: &model)
      if !problems.isEmpty {
        let report = failureReport(
          seed: seed, steps: steps, step: step, problems: problems, operations: operations)
        return (report, operations)
      }
    }
    return (nil, operations)
  }

  private static func failureReport(
    seed: UInt64, steps: Int, step: Int, problems: [String], operations: [Operation]
  ) -> String {
    var lines = [
      "ChainBind differs from the model: seed \(seed), step \(step) (replay:"
        + " CHAINBIND_MODEL_SEED=\(seed) CHAINBIND_MODEL_STEPS=\(steps))"
    ]
    lines += problems.map { "  - \($0)" }
    lines.append("Operations so far:")
    lines += operations.enumerated().map { "  \($0.offset): \($0.element)" }
    return lines.joined(separator: "\n")
  }

  // MARK: Generating operations

  private static func nextOperation(
    _ random: inout SplitMix64, model: ReferenceModel, nextSinkID: inout Int,
    allowsUnobservableHeads: Bool
  ) -> Operation {
    let aliveObjects = ObjectRef.all.filter { model.alive.contains($0) }
    let aliveProperties = aliveObjects.flatMap(\.properties)
    while true {
      if let operation = candidate(
        &random, model: model, aliveObjects: aliveObjects, aliveProperties: aliveProperties,
        nextSinkID: &nextSinkID, allowsUnobservableHeads: allowsUnobservableHeads)
      {
        return operation
      }
    }
  }

  private static func candidate(
    _ random: inout SplitMix64, model: ReferenceModel, aliveObjects: [ObjectRef],
    aliveProperties: [PropertyRef], nextSinkID: inout Int, allowsUnobservableHeads: Bool
  ) -> Operation? {
    let chainCount = model.chains.count
    // Mostly active chains; sometimes a released one (adding to it reports .chainInactive).
    func someChain() -> Int? {
      guard chainCount > 0 else { return nil }
      let active = (0..<chainCount).filter { model.chains[$0].isActive }
      if !active.isEmpty && random.chance(85) { return random.pick(active) }
      return random.below(chainCount)
    }
    let roll = random.below(100)
    switch roll {
    case 0..<14:
      var candidates = aliveProperties.filter {
        if case .plain = $0.object { return false }
        return true
      }
      if allowsUnobservableHeads && random.chance(25) { candidates = aliveProperties }
      guard !candidates.isEmpty else { return nil }
      let property = random.pick(candidates)
      let role: Role = random.chance(30) ? .in : .inout
      var onEvent = false
      if case .field = property.object {
        onEvent = allowsUnobservableHeads ? random.chance(75) : true
      }
      let joins = model.membership(of: property).map {
        model.chains[$0.chain].type == property.type
      }
      guard joins == true || chainCount < maxChains else { return nil }
      return .start(property, role, onEvent: onEvent)
    case 14..<40:
      guard let chain = someChain(), !aliveProperties.isEmpty else { return nil }
      let property = random.pick(aliveProperties)
      let role = random.pick([Role.in, .out, .inout])
      let custom = random.chance(25)
      var onEvent = false
      if case .field = property.object { onEvent = random.chance(85) }
      return .add(chain: chain, property, role, custom: custom, onEvent: onEvent)
    case 40..<45:
      guard let chain = someChain() else { return nil }
      return .filter(chain: chain, index: random.below(3))
    case 45..<53:
      guard let chain = someChain() else { return nil }
      nextSinkID += 1
      return .addSink(chain: chain, key: random.pick(["a", "b"]), id: nextSinkID)
    case 53..<56:
      guard let chain = someChain() else { return nil }
      return .removeSink(chain: chain, key: random.pick(["a", "b"]))
    case 56..<75:
      var candidates = aliveProperties.filter {
        if case .model = $0.object { return true }
        return false
      }
      // Mostly properties that send, so that most sets are changes.
      let senders = candidates.filter {
        guard let (chain, index) = model.membership(of: $0) else { return false }
        return model.chains[chain].members[index].role.sends
      }
      if !senders.isEmpty && random.chance(70) { candidates = senders }
      guard !candidates.isEmpty else { return nil }
      let property = random.pick(candidates)
      return .set(property, Fixed.randomValue(of: property.type, &random))
    case 75..<84:
      let fields = (0..<2).filter { model.alive.contains(.field($0)) }
      guard !fields.isEmpty else { return nil }
      return .userEdit(field: random.pick(fields), random.pick(Fixed.texts))
    case 84..<88:
      let candidates = aliveProperties.filter {
        if case .model = $0.object { return false }
        return true
      }
      guard !candidates.isEmpty else { return nil }
      let property = random.pick(candidates)
      return .programmaticSet(property, Fixed.randomValue(of: property.type, &random))
    case 88..<90:
      guard !aliveObjects.isEmpty else { return nil }
      return .unbindObject(random.pick(aliveObjects))
    case 90..<93:
      guard !aliveProperties.isEmpty else { return nil }
      return .unbindProperty(random.pick(aliveProperties))
    case 93..<95:
      guard let chain = someChain() else { return nil }
      return random.chance(50) ? .unbindCode(chain: chain) : .unbindHandle(chain: chain)
    default:
      guard !aliveObjects.isEmpty else { return nil }
      return .deallocate(random.pick(aliveObjects))
    }
  }

  // MARK: Applying and comparing

  // Applies an operation to the library, then to the model. Returns what already differs.
  private static func apply(
    _ operation: Operation, to world: LibraryWorld, and model: inout ReferenceModel
  ) -> [String] {
    var problems: [String] = []
    switch operation {
    case .start(let property, let role, let onEvent):
      let handle = world.start(property, role, onEvent: onEvent)
      switch model.start(property, role, onEvent: onEvent) {
      case .joined(let chain):
        if handle.code != world.handles[chain].code {
          problems.append(
            "joined chain \(handle.code), expected #\(chain) \(world.handles[chain].code)")
        }
      case .created(let chain):
        if let same = world.handles.firstIndex(where: { $0.code == handle.code }) {
          problems.append("expected a new chain, got #\(same) \(handle.code)")
        }
        precondition(chain == world.handles.count)
        world.handles.append(handle)
      }
      handle.reportErrors(to: world.recorder)
    case .add(let chain, let property, let role, let custom, let onEvent):
      world.add(chain: chain, property, role, custom: custom, onEvent: onEvent)
      model.add(chain: chain, property, role, custom: custom, onEvent: onEvent)
    case .filter(let chain, let index):
      world.handles[chain].filter(index)
      model.addFilter(chain: chain, index)
    case .addSink(let chain, let key, let id):
      world.handles[chain].addSink(key: key, id: id, recorder: world.recorder)
      model.addSink(chain: chain, key: key, id: id)
    case .removeSink(let chain, let key):
      world.handles[chain].removeSink(key: key)
      model.removeSink(chain: chain, key: key)
    case .set(let property, let value):
      world.set(property, value)
      // The set stores the value and notifies the chain; its didSet (the log) runs after the
      // chain has delivered.
      model.values[property] = value
      model.change(from: property, raw: value)
      model.writeLog.append(property.description)
    case .userEdit(let field, let text):
      world.userEdit(field: field, text)
      let property = PropertyRef(object: .field(field), isText: true)
      model.write(property, .string(text))
      model.change(from: property, raw: .string(text))
    case .programmaticSet(let property, let value):
      world.set(property, value)
      model.write(property, value)
    case .unbindObject(let object):
      world.unbind(object)
      model.unbind(object)
    case .unbindProperty(let property):
      world.unbind(property)
      model.detach(property)
    case .unbindCode(let chain):
      Bind.unbind(world.handles[chain].code)
      model.release(chain)
    case .unbindHandle(let chain):
      world.handles[chain].unbind()
      model.release(chain)
    case .deallocate(let object):
      if !world.deallocate(object) { problems.append("\(object) was not deallocated") }
      model.deallocate(object)
    }
    return problems
  }

  private static func compare(_ world: LibraryWorld, with model: inout ReferenceModel) -> [String] {
    var problems: [String] = []
    for object in ObjectRef.all where model.alive.contains(object) {
      for property in object.properties {
        guard let value = world.read(property) else {
          problems.append("\(property): object is gone, expected alive")
          continue
        }
        let expected = model.value(property)
        if value != expected {
          problems.append("\(property) == \(value), expected \(expected)")
        }
      }
    }
    if world.log.entries != model.writeLog {
      problems.append("writes \(world.log.entries), expected \(model.writeLog)")
    }
    world.log.entries = []
    model.writeLog = []
    if world.recorder.sinkCalls != model.sinkCalls {
      problems.append("sink calls \(world.recorder.sinkCalls), expected \(model.sinkCalls)")
    }
    if world.recorder.errors != model.errors {
      problems.append("errors \(world.recorder.errors), expected \(model.errors)")
    }
    world.recorder.sinkCalls = []
    world.recorder.errors = []
    model.sinkCalls = []
    model.errors = []

    // Before anything prunes: plain objects deallocated this step are still members ("Lifetime").
    checkActivity(world, model, moment: "before memberCount", into: &problems)
    for (chain, handle) in world.handles.enumerated() {
      let count = handle.memberCount
      let expected = model.memberCount(chain)
      if count != expected {
        problems.append("#\(chain) \(handle.code).memberCount == \(count), expected \(expected)")
      }
    }
    checkActivity(world, model, moment: "after memberCount", into: &problems)
    return problems
  }

  private static func checkActivity(
    _ world: LibraryWorld, _ model: ReferenceModel, moment: String, into problems: inout [String]
  ) {
    for (chain, handle) in world.handles.enumerated()
    where handle.isActive != model.chains[chain].isActive {
      problems.append(
        "#\(chain) \(handle.code).isActive == \(handle.isActive) \(moment),"
          + " expected \(model.chains[chain].isActive)")
    }
    let count = Bind.activeChainCount
    if count != model.activeChainCount {
      problems.append(
        "Bind.activeChainCount == \(count) \(moment), expected \(model.activeChainCount)")
    }
  }
}
