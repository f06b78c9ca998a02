import ChainBind
import Dispatch
import Observation
import Synchronization
import Testing

/// An `@Observable` member: the chain's writes into it notify Observation as the user's do.
@Observable
private final class Profile {
  var name = "a"
}

/// Clamps what is written into it: its setter changes it again.
private final class Clamp {
  @Bound var level = 0 { didSet { if level > 10 { level = 10 } } }
}

/// Sets itself to 2 when written 1 while armed.
private final class Rebound {
  var armed = false
  @Bound var level = 0 {
    didSet {
      if level == 1 && armed {
        armed = false
        level = 2
      }
    }
  }
}

/// A member whose setter can hold the thread that writes it, for two-thread traces.
private final class Holding: @unchecked Sendable {
  let hook = Hook<Int>()
  @Bound var value = 0 { didSet { hook(value) } }
}

private final class Source: @unchecked Sendable {
  @Bound var value = 0
}

/// A switch, written through a conversion.
private final class Toggle {
  var isOn = false
}

/// A text field that sends, for a revert through a conversion.
private final class Field {
  @Bound var text = ""
}

// Docs/Semantics.md, "Tracing": a traced chain hands each event of its delivery to its tracer,
// in the order things happen; tracing changes no behaviour.

@Suite struct TraceTests {
  @Test func aWriteShowsTheValueTheSetterGetsAfterConversion() {
    let model = Model()
    let toggle = Toggle()
    let display = Display()
    var events: [ChainEvent.Kind] = []
    var lines: [String] = []
    let chain = Bind.inout(model, \.double)
      .out(toggle, \.isOn, convert: { $0 == 1.0 })
      .out(display, \.text)
      .out(display, \.number, convert: { Int($0 * 10) })
    chain.trace {
      events.append($0.kind)
      lines.append($0.description)
    }
    model.double = 1.0
    #expect(toggle.isOn && display.text == "1.0" && display.number == 10)
    #expect(
      events.filter { if case .memberWritten = $0 { true } else { false } } == [
        .memberWritten(member: "Toggle.isOn", value: "true"),
        .memberWritten(member: "Display.text", value: "1.0"),
        .memberWritten(member: "Display.number", value: "10"),
      ])
    // A line quotes the values of a chain of `String`s only, as before.
    #expect(lines.contains("\(chain.code): wrote Toggle.isOn = true"))
    #expect(lines.contains("\(chain.code): wrote Display.text = 1.0"))
    #expect(lines.contains("\(chain.code): wrote Display.number = 10"))
  }

  @Test func aChainOfOptionalsShowsTheUnwrappedValueWritten() {
    let model = Model()
    let display = Display()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.optionalString).out(display, \.text, convert: { $0 ?? "-" })
    chain.trace { events.append($0.kind) }
    model.optionalString = "501"
    #expect(display.text == "501")
    #expect(events.contains(.memberWritten(member: "Display.text", value: "501")))
  }

  @Test func aRevertShowsTheValueTheSenderGetsBack() {
    let model = Model()
    let field = Field()
    var lines: [String] = []
    let chain = Bind.inout(model, \.int)
      .inout(field, \.text, convert: { "\($0)%" }, back: { Int($0.dropLast()) })
      .filter { $0 < 10 }
    chain.trace { lines.append($0.description) }
    field.text = "12%"
    #expect(field.text == "0%" && model.int == 0)
    #expect(lines.contains("\(chain.code): reverted Field.text to 0%"))
  }

  @Test func aDeliveryIsTracedInOrder() {
    let model = Model()
    let label = Display()
    let mirror = Display()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.string)
      .out(label, \.text)
      .out(mirror, \.text)
      .out(key: "log") { _ in }
    var lines: [String] = []
    chain.trace {
      events.append($0.kind)
      lines.append($0.description)
    }
    mirror.text = "7"
    model.string = "7"
    // Values as `String(describing:)`; the lines quote a `String` chain's.
    #expect(
      events == [
        .changeReceived(from: "Model.string", value: "7"),
        .memberWritten(member: "Display.text", value: "7"),
        .memberSkipped(member: "Display.text"),
        .sinkCalled(key: "log"),
      ])
    #expect(
      lines == [
        "\(chain.code): change from Model.string: \"7\"",
        "\(chain.code): wrote Display.text = \"7\"",
        "\(chain.code): skipped Display.text: already equal",
        "\(chain.code): called sink log",
      ])
    chain.unbind()
  }

  // A sink's first call, with the chain's value when it is added, is a sink called too.
  @Test func aSinksFirstCallIsTraced() {
    final class Screen {}
    let model = Model()
    let screen = Screen()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).trace { events.append($0.kind) }
    chain.out(key: "log") { _ in }
    chain.out(key: "later", initial: false) { _ in }
    chain.out(screen, key: "render") { _, _ in }
    #expect(
      events == [
        .sinkCalled(key: "log"),
        .sinkCalled(key: "out(Screen)"),
      ])
    chain.unbind()
  }

  @Test func aRejectionIsTracedWithItsFilterAndTheRevert() {
    let model = Model(int: 1)
    let label = Plain()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int)
      .out(label, \.int)
      .filter { _ in true }
      .filter { $0 < 10 }
      .trace { events.append($0.kind) }
    model.int = 50
    #expect(
      events == [
        .changeReceived(from: "Model.int", value: "50"),
        .filterRejected(filter: 1, value: "50"),
        .reverted(member: "Model.int", value: "1"),
      ])
    #expect(model.int == 1)
    #expect(label.int == 1)
    chain.unbind()
  }

  @Test func aConversionFailureIsTraced() {
    let model = Model()
    let field = TextField()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(field, \.text, on: .editingChanged)
      .onError { _ in }
      .out(model, \.int)
      .trace { events.append($0.kind) }
    field.userTypes("x")
    #expect(events.contains(.conversionFailed(member: "Model.int", value: "x")))
    #expect(!events.contains { if case .memberWritten = $0 { true } else { false } })
    chain.unbind()
  }

  @Test func aChangeFromASinkIsQueuedThenDelivered() {
    let model = Model()
    let label = Display()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int)
      .out(label, \.number)
      .out(key: "bump") { if $0 == 1 { model.int = 2 } }
      .trace { events.append($0.kind) }
    model.int = 1
    #expect(
      events == [
        .changeReceived(from: "Model.int", value: "1"),
        .memberWritten(member: "Display.number", value: "1"),
        .sinkCalled(key: "bump"),
        .changeQueued(from: "Model.int", value: "2"),
        .changeReceived(from: "Model.int", value: "2"),
        .memberWritten(member: "Display.number", value: "2"),
        .sinkCalled(key: "bump"),
      ])
    chain.unbind()
  }

  // A member's write is told before its setter runs: what the setter changes comes after it.
  @Test func aChangeASetterMakesIsTracedAfterTheWrite() {
    let model = Model()
    let clamp = Clamp()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).inout(clamp, \.level).trace { events.append($0.kind) }
    model.int = 15
    #expect(
      events == [
        .changeReceived(from: "Model.int", value: "15"),
        .memberWritten(member: "Clamp.level", value: "15"),
        .changeQueued(from: "Clamp.level", value: "10"),
        .changeReceived(from: "Clamp.level", value: "10"),
        .memberWritten(member: "Model.int", value: "10"),
      ])
    #expect(model.int == 10)
    chain.unbind()
  }

  // A revert is a write too: told before the setter runs, and what the setter changes after it.
  @Test func aChangeARevertsSetterMakesIsTracedAfterTheRevert() {
    let model = Model(int: 1)
    let rebound = Rebound()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).inout(rebound, \.level).filter { $0 < 100 }
      .trace { events.append($0.kind) }
    rebound.armed = true
    rebound.level = 200
    #expect(
      events == [
        .changeReceived(from: "Rebound.level", value: "200"),
        .filterRejected(filter: 0, value: "200"),
        .reverted(member: "Rebound.level", value: "1"),
        .changeQueued(from: "Rebound.level", value: "2"),
        .changeReceived(from: "Rebound.level", value: "2"),
        .memberWritten(member: "Model.int", value: "2"),
      ])
    #expect(model.int == 2)
    chain.unbind()
  }

  // Another thread's change, made while this one is held in a member's setter, is traced as
  // queued after the write this thread began.
  @Test func anotherThreadsChangeDuringASetterIsTracedAfterTheWrite() {
    let source = Source()
    let holding = Holding()
    let events = LockedBox<[ChainEvent.Kind]>([])
    let chain = Bind.inout(source, \.value).out(holding, \.value)
      .trace { event in events.withLock { $0.append(event.kind) } }
    let (entered, proceed) = hold(holding.hook, at: 20)
    let done = startThread { source.value = 20 }
    entered.wait()
    source.value = 99  // queued for the held thread: this call returns
    proceed.signal()
    done.wait()
    holding.hook.set(nil)
    #expect(waitUntilIdle(chain))
    let seen = events.withLock { $0 }
    let wrote = seen.firstIndex(of: .memberWritten(member: "Holding.value", value: "20"))
    let queued = seen.firstIndex(of: .changeQueued(from: "Source.value", value: "99"))
    #expect(wrote != nil && queued != nil && wrote! < queued!)
    #expect(holding.value == 99)
    chain.unbind()
  }

  @Test func aValueThatDoesNotConvertForTheChainIsTraced() {
    let model = Model()
    let field = TextField()
    var events: [ChainEvent.Kind] = []
    var errors: [BindingError] = []
    let chain = Bind.inout(model, \.int).onError { errors.append($0) }
      .inout(field, \.text, on: .editingChanged)
      .trace { events.append($0.kind) }
    field.userTypes("12a")
    // Named as the error names it.
    #expect(errors.count == 1)
    #expect(events == errors.map { .conversionFailed(member: $0.member, value: "12a") })
    #expect(model.int == 0)
    chain.unbind()
  }

  @Test func aSinkWhoseOwnerIsGoneIsNotTracedAsCalled() {
    final class Cell {}
    let model = Model()
    var calls: [Int] = []
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).trace { events.append($0.kind) }
    do {
      let cell = Cell()
      chain.out(cell, key: "render") { _, value in calls.append(value) }
      model.int = 1
    }
    events.removeAll()
    model.int = 2
    #expect(calls == [0, 1])
    #expect(
      events == [
        .changeReceived(from: "Model.int", value: "2"),
        .memberRemoved(member: "out(Cell)", why: .deallocated),
      ])
    chain.unbind()
  }

  @Test func aSinkRemovedIsTraced() {
    let model = Model()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).out(key: "log") { _ in }
      .trace { events.append($0.kind) }
    chain.removeOut(key: "log")
    chain.removeOut(key: "log")  // none left: nothing happens
    #expect(events == [.memberRemoved(member: "log", why: .unbound)])
    chain.unbind()
  }

  @Test("the chain's own write into an @Observable member, or its revert, is no queued change")
  func writesIntoAnObservableMemberAreNotQueuedChanges() {
    let model = Model()
    let profile = Profile()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.string).inout(profile, \.name).filter { $0 != "no" }
      .trace { events.append($0.kind) }
    model.string = "q"
    profile.name = "no"
    #expect(!events.contains { if case .changeQueued = $0 { true } else { false } })
    #expect(events.filter { if case .changeReceived = $0 { true } else { false } }.count == 2)
    #expect(profile.name == "q")
    #expect(model.string == "q")
    chain.unbind()
  }

  @Test func membershipChangesAreTraced() {
    let model = Model()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).trace { events.append($0.kind) }
    let kept = Display()
    chain.out(kept, \.number)
    do {
      let gone = Display()
      chain.out(gone, \.text) { String($0) }
      _ = chain.memberCount  // prunes the dead member
    }
    Bind.unbind(kept)
    let other = Model()
    let moved = Display()
    chain.out(moved, \.number)
    Bind.inout(other, \.int).out(moved, \.number)
    chain.unbind()
    #expect(
      events == [
        .memberAdded(member: "Display.number", role: "out"),
        .memberAdded(member: "Display.text", role: "out"),
        .memberRemoved(member: "Display.text", why: .deallocated),
        .memberRemoved(member: "Display.number", why: .unbound),
        .memberAdded(member: "Display.number", role: "out"),
        .memberMovedAway(member: "Display.number"),
        // chain.unbind(): the members still in it leave, then the chain ends.
        .memberRemoved(member: "Model.int", why: .unbound),
        .chainEnded,
      ])
    Bind.unbind(other)
  }

  @Test func anUnboundTracedChainKeepsNothingAlive() {
    final class Counter { var events = 0 }
    weak var weakCounter: Counter?
    do {
      let model = Model()
      let display = Display()
      let counter = Counter()
      weakCounter = counter
      let chain = Bind.inout(model, \.int).trace { _ in counter.events += 1 }
        .out(display, \.number)
      model.int = 3  // the traced delivery remembers its members' names
      chain.unbind()  // without removeTrace()
      #expect(counter.events > 0)
    }
    #expect(weakCounter == nil)
  }

  @Test func removeTraceStopsEvents() {
    let model = Model()
    var count = 0
    let chain = Bind.inout(model, \.int).trace { _ in count += 1 }
    model.int = 1
    let traced = count
    chain.removeTrace()
    model.int = 2
    #expect(traced == 1)
    #expect(count == 1)
    chain.unbind()
  }

  @Test func theLastTracerWins() {
    let model = Model()
    var first = 0
    var second = 0
    let chain = Bind.inout(model, \.int).trace { _ in first += 1 }.trace { _ in second += 1 }
    model.int = 1
    #expect(first == 0)
    #expect(second == 1)
    chain.unbind()
  }

  @Test func tracingChangesNoBehaviour() {
    func run(traced: Bool) -> [String] {
      let model = Model()
      let label = Plain()
      var log: [String] = []
      let chain = Bind.inout(model, \.int).out(label, \.int)
        .filter { $0 != 3 }
        .out(key: "log") { log.append("sink \($0), label \(label.int)") }
      if traced { chain.trace { _ in } }
      for value in [1, 3, 2, 2] { model.int = value }
      log.append("model \(model.int), label \(label.int), writes \(label.intWrites)")
      chain.unbind()
      return log
    }
    #expect(run(traced: true) == run(traced: false))
  }

  @Test func anEventDescribesItselfOnOneLine() {
    let model = Model()
    var lines: [String] = []
    let chain = Bind.inout(model, \.int).trace { lines.append($0.description) }
    model.int = 3
    #expect(lines == ["\(chain.code): change from Model.int: 3"])
    chain.unbind()
  }

  // `trace()` writes each event as one line: line breaks in a value are escaped there (the
  // event's `kind` keeps the value as it describes itself).
  @Test func anEventWithLineBreaksInItsValueIsOneLine() {
    let model = Model()
    var events: [ChainEvent] = []
    let chain = Bind.inout(model, \.string).trace { events.append($0) }
    model.string = "x\ny"
    #expect(events.map(\.description) == ["\(chain.code): change from Model.string: \"x\\ny\""])
    #expect(events.map(\.kind) == [.changeReceived(from: "Model.string", value: "x\ny")])
    chain.unbind()
  }

  // A rejected change from a member the chain cannot write (an `in` member with `back:`, a
  // read-only computed property) is not reverted, and not traced as reverted.
  @Test(arguments: [false, true])
  func aMemberThatCannotBeWrittenIsNotTracedAsReverted(readOnly: Bool) {
    let model = Model()
    let source = Doubler()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int)
    if readOnly {
      chain.in(source, \.doubled)
    } else {
      chain.in(source, \.string, back: { Int($0) })
    }
    chain.filter { $0 < 100 }.trace { events.append($0.kind) }
    if readOnly { source.int = 60 } else { source.string = "500" }
    let from = readOnly ? "Doubler.<computed Int>" : "Doubler.string"
    let value = readOnly ? "120" : "500"
    #expect(
      events == [
        .changeReceived(from: from, value: value), .filterRejected(filter: 0, value: value),
      ])
    #expect(source.int == (readOnly ? 60 : 1))
    #expect(source.string == (readOnly ? "" : "500"))
    chain.unbind()
  }
}

private final class Doubler {
  @Bound var int = 1
  @Bound var string = ""
  var doubled: Int { int * 2 }
}

@Suite struct TraceIsolationTests {
  @Test("trace and onReject added from another actor are refused")
  @MainActor
  func fromAnotherActorIsRefused() async {
    let model = Model()
    let errors = ErrorStream()
    let chain = Bind.inout(model, \.int).onError { errors.record($0) }
    await TraceWorker().extend(chain)
    let members = await errors.first(2).map(\.member)
    #expect(members == ["trace", "onReject"])
    var traced = 0
    chain.trace { _ in traced += 1 }  // from the chain's own actor: accepted
    model.int = 1
    #expect(traced == 1)
    chain.unbind()
  }
}

private actor TraceWorker {
  func extend(_ chain: Chain<Int>) {
    chain.trace { _ in }.onReject { _ in }
  }
}

/// Errors, handed to the awaiting test.
private final class ErrorStream: Sendable {
  let stream: AsyncStream<BindingError>
  private let continuation: AsyncStream<BindingError>.Continuation

  init() { (stream, continuation) = AsyncStream.makeStream(of: BindingError.self) }

  func record(_ error: BindingError) { continuation.yield(error) }

  func first(_ count: Int) async -> [BindingError] {
    var errors: [BindingError] = []
    for await error in stream {
      errors.append(error)
      if errors.count == count { break }
    }
    return errors
  }
}

/// A receiver whose properties have no observers: a key path names them (`Display.text`).
final class Display {
  var text = ""
  var number = 0
}
