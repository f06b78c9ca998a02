@_spi(Testing) import ChainBind
import Observation
import Testing

// Docs/Semantics.md, "Re-entrancy": a tracked member the chain writes is read back once the write
// returns; what its setter set on the way (one property of several) is no change, and what it
// reads then is sent only when it is not the value written.

/// "Jane Roe" → ("Jane", "Roe"): the first name, and the rest.
private func nameParts(_ name: String) -> (String, String) {
  let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
  return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
}

/// A computed property whose setter sets two `@Bound` properties, one after the other.
private final class Profile {
  @Bound var first = "Ann"
  @Bound var last = "Lee"
  var fullName: String {
    get { "\(first) \(last)" }
    set { (first, last) = nameParts(newValue) }
  }
}

/// The same over `@Observable` properties.
@Observable
private final class ObservedProfile {
  var first = "Ann"
  var last = "Lee"
  var fullName: String {
    get { "\(first) \(last)" }
    set { (first, last) = nameParts(newValue) }
  }
}

/// A setter that stores twice, and one that corrects what it is given (a clamp).
private final class Store {
  @Bound var raw = ""
  @Bound var level = 0
  var text: String {
    get { raw }
    set {
      raw = ""
      raw = newValue
    }
  }
  var clamped: Int {
    get { level }
    set { level = min(newValue, 10) }
  }
}

/// A field the user types into: counts the chain's writes.
private final class Field {
  @Bound var text = "" { didSet { writes += 1 } }
  var writes = 0
}

private final class Log<Value> {
  var values: [Value] = []
}

@Suite("Tracked sources: a write through a setter that sets several properties")
struct SetterEchoTests {
  @Test("what the user typed is not overwritten by the setter's steps", arguments: [false, true])
  func editorKeepsWhatWasTyped(observed: Bool) {
    let field = Field()
    let sent = Log<String>()
    let profile = Profile()
    let observedProfile = ObservedProfile()
    let chain =
      observed
      ? Bind.inout(observedProfile, \.fullName)
      : Bind.inout(profile, \.fullName)
    chain.inout(field, \.text).out(key: "log", initial: false) { sent.values.append($0) }
    field.text = "Jane Roe"
    #expect(field.writes == 2)  // the initial sync, then the user's set: none from the chain
    #expect(field.text == "Jane Roe")
    #expect(sent.values == ["Jane Roe"])
    #expect((observed ? observedProfile.fullName : profile.fullName) == "Jane Roe")
    chain.unbind()
  }

  @Test("a setter that stores twice is one write")
  func setterStoresTwice() {
    let store = Store()
    let field = Field()
    let sent = Log<String>()
    let chain = Bind.inout(store, \.text).inout(field, \.text)
      .out(key: "log", initial: false) { sent.values.append($0) }
    field.text = "typed"
    #expect(field.writes == 1)
    #expect(store.raw == "typed")
    #expect(sent.values == ["typed"])
    chain.unbind()
  }

  // The second table row sets again what the clamp corrects to the member's last read.
  @Test(
    "a setter that corrects the chain's write is a change",
    arguments: [([15], [15, 10]), ([15, 20], [15, 10, 20, 10])])
  func setterCorrects(sets: [Int], expected: [Int]) {
    let store = Store()
    let source = Model()
    let sent = Log<Int>()
    let chain = Bind.inout(source, \.int).inout(store, \.clamped)
      .out(key: "log", initial: false) { sent.values.append($0) }
    for value in sets { source.int = value }
    #expect(store.level == 10)
    #expect(source.int == 10)
    #expect(sent.values == expected)
    chain.unbind()
  }

  @Test("a revert through such a setter is rejected once and sends nothing")
  func revertRejectsOnce() {
    let profile = Profile()
    let sent = Log<String>()
    let rejected = Log<String>()
    let chain = Bind.inout(profile, \.fullName)
      .filter { !$0.hasSuffix("Xu") }
      .onReject { rejected.values.append($0) }
      .out(key: "log", initial: false) { sent.values.append($0) }
    Bind.batch {
      profile.first = "Bo"
      profile.last = "Xu"
    }
    #expect(profile.fullName == "Ann Lee")
    #expect(rejected.values == ["Bo Xu"])
    #expect(sent.values.isEmpty)
    chain.unbind()
  }

  @Test("an initial sync through such a setter is no change", arguments: [false, true])
  func initialSync(inBatch: Bool) {
    let field = Field()
    field.text = "Jane Roe"
    let profile = Profile()
    let sent = Log<String>()
    var chain: Chain<String>?
    let bind = {
      chain = Bind.inout(field, \.text).out(key: "log") { sent.values.append($0) }
        .inout(profile, \.fullName)
    }
    if inBatch { Bind.batch(bind) } else { bind() }
    #expect(profile.fullName == "Jane Roe")
    #expect(sent.values == ["Jane Roe"])
    chain?.unbind()
  }
}
