import ChainBind
import Testing

// Keyed sinks (`.out(key:)`, CRDataBind's `_out_key_any`): Docs/Semantics.md, "Chains and members",
// "Initial sync", "Propagation".

/// A property that appends its name to a shared log each time it is written.
private final class SinkOrderProbe {
  let name: String
  var log: (String) -> Void
  var value = 0 { didSet { log(name) } }

  init(_ name: String, log: @escaping (String) -> Void) {
    self.name = name
    self.log = log
  }
}

@Suite struct SinkTests {
  @Test func sinksAreCalledAfterTheMembersInTheOrderAdded() {
    let model = Model()
    var log: [String] = []
    let first = SinkOrderProbe("first member") { log.append($0) }
    let second = SinkOrderProbe("second member") { log.append($0) }
    Bind.inout(model, \.int)
      .out(key: "one") { _ in log.append("sink one") }
      .out(first, \.value)
      .out(key: "two") { _ in log.append("sink two") }
      .out(second, \.value)
      .out(key: "three") { _ in log.append("sink three") }
    log.removeAll()

    model.int = 1

    #expect(log == ["first member", "second member", "sink one", "sink two", "sink three"])
  }

  @Test func removeOutStopsTheCalls() {
    let model = Model()
    var kept = 0
    var removed = 0
    let chain = Bind.inout(model, \.int)
      .out(key: "kept") { _ in kept += 1 }
      .out(key: "removed") { _ in removed += 1 }
    model.int = 1
    #expect(removed == 2)

    chain.removeOut(key: "removed")
    model.int = 2
    model.int = 3

    #expect(removed == 2)
    #expect(kept == 4)
  }

  @Test func reAddingAKeyReplacesTheSink() {
    let model = Model(int: 1)
    var oldCalls: [Int] = []
    var newCalls: [Int] = []
    let chain = Bind.inout(model, \.int).out(key: "sink") { oldCalls.append($0) }

    chain.out(key: "sink") { newCalls.append($0) }
    model.int = 2

    #expect(oldCalls == [1])
    #expect(newCalls == [1, 2])
  }

  @Test func aReplacedSinkCanBeRemovedByItsKey() {
    let model = Model()
    var calls = 0
    let chain = Bind.inout(model, \.int)
      .out(key: "sink") { _ in calls += 100 }
      .out(key: "sink") { _ in calls += 1 }
    #expect(calls == 101)

    chain.removeOut(key: "sink")
    model.int = 5

    #expect(calls == 101)
  }

  @Test func sinksGetTheValueInTheChainsType() {
    let model = Model()
    let field = TextField()
    var received: [Int] = []
    Bind.inout(model, \.int)
      .inout(field, \.text, on: .editingChanged)
      .out(key: "record") { (value: Int) in received.append(value) }

    field.userTypes(" 42 ")

    #expect(received == [0, 42])
  }

  @Test func sinksAreNotCalledForRejectedChanges() {
    let model = Model()
    var received: [Int] = []
    Bind.inout(model, \.int)
      .out(key: "record") { received.append($0) }
      .filter { $0 >= 0 }

    model.int = -1
    model.int = 3
    model.int = -2

    #expect(received == [0, 3])
  }

  @Test func sinksAreNotCalledForFailedInwardConversions() {
    let model = Model()
    let field = TextField()
    let errors = ErrorLog()
    var calls = 0
    Bind.inout(model, \.int)
      .onError(errors.handler)
      .inout(field, \.text, on: .editingChanged)
      .out(key: "count") { _ in calls += 1 }

    field.userTypes("not a number")

    #expect(calls == 1)
    #expect(errors.errors.count == 1)
  }

  @Test func sinksAreCalledOnEveryAcceptedChangeEvenWhenEqual() {
    let model = Model()
    var calls = 0
    Bind.inout(model, \.bool).out(key: "count") { _ in calls += 1 }

    model.bool = false
    model.bool = false

    #expect(calls == 3)
  }

  @Test func sinksAreNotCountedAsMembers() {
    let model = Model()
    let label = Plain()
    let chain = Bind.inout(model, \.int)
      .out(label, \.int)
      .out(key: "one") { _ in }
      .out(key: "two") { _ in }

    #expect(chain.memberCount == 2)
  }

  @Test func sinksOfOneChainDoNotSeeAnotherChain() {
    let first = Model()
    let second = Model()
    var firstCalls: [Int] = []
    var secondCalls: [Int] = []
    Bind.inout(first, \.int).out(key: "sink") { firstCalls.append($0) }
    Bind.inout(second, \.int).out(key: "sink") { secondCalls.append($0) }

    first.int = 1

    #expect(firstCalls == [0, 1])
    #expect(secondCalls == [0])
  }
}

// Docs/Semantics.md, "Chains and members": a sink added with `initial: false` is not called when
// it is added, and is called on every accepted change after.
@Suite("Sinks: initial: false")
struct InitialFalseSinkTests {
  @Test("an action sink is not called when added, then on every change")
  func notCalledWhenAdded() {
    let model = Model(int: 3)
    var calls: [Int] = []
    let chain = Bind.inout(model, \.int).out(key: "submit", initial: false) { calls.append($0) }
    #expect(calls.isEmpty)
    model.int = 4
    model.int = 4  // every set is a change
    #expect(calls == [4, 4])
    chain.unbind()
  }

  @Test("initial: true (the default) calls the sink with the current value")
  func defaultIsInitial() {
    let model = Model(int: 3)
    var calls: [Int] = []
    let chain = Bind.inout(model, \.int).out(key: "render", initial: true) { calls.append($0) }
    #expect(calls == [3])
    chain.unbind()
  }

  @Test("a rejected change does not call it")
  func rejectedChangeDoesNotCall() {
    let model = Model(int: 1)
    var calls: [Int] = []
    let chain = Bind.inout(model, \.int)
      .filter { $0 < 10 }
      .out(key: "action", initial: false) { calls.append($0) }
    model.int = 20
    #expect(calls.isEmpty)
    #expect(model.int == 1)
    model.int = 5
    #expect(calls == [5])
    chain.unbind()
  }

  @Test("replacing a sink with initial: false does not call the new one now")
  func replacementIsNotCalled() {
    let model = Model(int: 1)
    var first: [Int] = []
    var second: [Int] = []
    let chain = Bind.inout(model, \.int)
      .out(key: "k") { first.append($0) }
      .out(key: "k", initial: false) { second.append($0) }
    #expect(first == [1])
    #expect(second.isEmpty)
    model.int = 2
    #expect(first == [1])
    #expect(second == [2])
    chain.unbind()
  }
}
