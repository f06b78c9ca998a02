@_spi(Testing) import ChainBind
import Dispatch
import Observation
import Synchronization
import Testing

// Docs/Semantics.md, "Tracked sources": properties of `@Observable` classes are observed like
// `@Bound` ones, synchronously after the new value is stored (on Linux).

@Observable
private final class Settings {
  var volume = 0.5
  var muted = false
  var effectiveVolume: Double { muted ? 0 : volume }
}

private final class Panel {
  @Bound var settings = Settings()
}

private final class Knob {
  var value = 0.0 { didSet { writes += 1 } }
  var writes = 0
}

@Suite("Tracked sources: @Observable classes")
struct ObservableSourceTests {
  @Test("a property of an @Observable class is a source, delivered synchronously")
  func observableProperty() {
    let settings = Settings()
    let slider = Knob()
    let chain = Bind.inout(settings, \.volume).out(slider, \.value)
    #expect(slider.value == 0.5)
    settings.volume = 0.8
    #expect(slider.value == 0.8)
    settings.volume = 0.2
    #expect(slider.value == 0.2)
    chain.unbind()
  }

  @Test("an inout member writes the @Observable property, without echo")
  func writesBack() {
    let settings = Settings()
    let model = Model(double: 0.1)
    let seen = ValueLog<Double>()
    let chain = Bind.inout(model, \.double)
      .inout(settings, \.volume)
      .out(key: "seen") { seen.values.append($0) }
    #expect(settings.volume == 0.1)
    model.double = 0.7
    #expect(settings.volume == 0.7)
    #expect(seen.values == [0.1, 0.7])
    settings.volume = 0.3
    #expect(model.double == 0.3)
    #expect(seen.values == [0.1, 0.7, 0.3])
    chain.unbind()
  }

  @Test("a computed property over @Observable properties is a source")
  func computedOverObservable() {
    let settings = Settings()
    let slider = Knob()
    let chain = Bind.in(settings, \.effectiveVolume).out(slider, \.value)
    settings.muted = true
    #expect(slider.value == 0)
    let writes = slider.writes
    settings.volume = 0.9  // not read while muted: no change
    #expect(slider.writes == writes)
    settings.muted = false
    #expect(slider.value == 0.9)
    chain.unbind()
  }

  @Test("an @Observable link behind a @Bound property is followed when replaced")
  func observableBehindBound() {
    let panel = Panel()
    let slider = Knob()
    let chain = Bind.in(panel, \.settings.volume).out(slider, \.value)
    panel.settings.volume = 0.6
    #expect(slider.value == 0.6)
    let old = panel.settings
    let replacement = Settings()
    replacement.volume = 0.25
    panel.settings = replacement
    #expect(slider.value == 0.25)
    old.volume = 1
    #expect(slider.value == 0.25)
    replacement.volume = 0.75
    #expect(slider.value == 0.75)
    chain.unbind()
  }

  @Test("a change to an equal value is not sent")
  func equalValueIsNotSent() {
    let settings = Settings()
    let seen = ValueLog<Double>()
    let chain = Bind.in(settings, \.volume).out(key: "seen") { seen.values.append($0) }
    settings.volume = 0.5
    #expect(seen.values == [0.5])
    chain.unbind()
  }
}

private final class ValueLog<Value> {
  var values: [Value] = []
}

@Observable
private final class Counter {
  var x = 0
}

/// Not `Equatable`: every read is a change.
private final class Box {
  let value: Int
  init(_ value: Int) { self.value = value }
}

private final class Mixed {
  @Bound var a = 0
  let counter = Counter()
  var reads = 0
  var sum: Int {
    reads += 1
    return a + counter.x
  }
  var boxed: Box { Box(a + counter.x) }
}

/// A model another thread sets.
private final class SharedModel: @unchecked Sendable {
  @Bound var value = 0
}

private final class CounterPanel {
  @Bound var counter = Counter()
  var reads = 0
  var x: Int {
    reads += 1
    return counter.x
  }
}

@Observable
private final class Theme {
  var suffix = ""
}

private class Account {
  @Bound var name = "a"
  init() {}
}

/// Overrides the path's last `@Bound` property with a getter that reads an `@Observable` one.
private final class StyledAccount: Account {
  let theme = Theme()
  override var name: String {
    get { super.name + theme.suffix }
    set { super.name = newValue }
  }
}

private final class Session {
  @Bound var account: Account = StyledAccount()
}

/// Overrides the path's last `@Bound` property with a getter that reads another `@Bound` one.
private final class NicknamedAccount: Account {
  @Bound var nick = "n"
  override var name: String {
    get { "\(super.name) aka \(nick)" }
    set { super.name = newValue }
  }
}

/// A path of `@Bound` properties through objects of their declaring classes, until a link is
/// replaced.
private final class PlainSession {
  @Bound var account = Account()
}

@Suite("Tracked sources: @Observable together with @Bound")
struct MixedSourceTests {
  // A path of `@Bound` properties through an object of a subclass that overrides one with a
  // getter of its own is not taken for the properties alone: the override's `@Observable`
  // read is watched, and a set of the last property reads the override.
  @Test("an override along a @Bound path is read, with what it reads")
  func overrideAlongABoundPathIsRead() throws {
    let session = Session()
    let styled = try #require(session.account as? StyledAccount)
    let sent = LockedBox<[String]>([])
    let chain = Bind.in(session, \.account.name).out(key: "k") { value in
      sent.withLock { $0.append(value) }
    }
    styled.theme.suffix = "!"
    session.account.name = "b"
    #expect(sent.withLock { $0 } == ["a", "a!", "b!"])
    chain.unbind()
  }

  // A link replaced by an object of a subclass is read through the override from then on, with
  // what the override reads; a plain object again takes the leaf's value.
  @Test("a link replaced by a subclass object is read through its override")
  func linkReplacedBySubclassObject() {
    let session = PlainSession()
    let sent = LockedBox<[String]>([])
    let chain = Bind.in(session, \.account.name).out(key: "k") { value in
      sent.withLock { $0.append(value) }
    }
    let nicknamed = NicknamedAccount()
    session.account = nicknamed
    nicknamed.nick = "x"
    nicknamed.name = "b"
    let styled = StyledAccount()
    session.account = styled
    styled.theme.suffix = "!"
    styled.name = "c"
    let plain = Account()
    session.account = plain
    plain.name = "d"
    #expect(
      sent.withLock { $0 }
        == ["a", "a aka n", "a aka x", "b aka x", "a", "a!", "c!", "a", "d"])
    chain.unbind()
  }

  @Test("changes of a @Bound dependency do not multiply the @Observable watches")
  func oneReadPerObservableChange() {
    let mixed = Mixed()
    let chain = Bind.in(mixed, \.sum).out(key: "k") { _ in }
    mixed.a = 1
    mixed.a = 2
    mixed.a = 3
    let reads = mixed.reads
    mixed.counter.x = 1
    #expect(mixed.reads - reads == 1)
    chain.unbind()
  }

  @Test("an @Observable dependency is watched from the binding on")
  func observableDependencyWatchedAtOnce() {
    let mixed = Mixed()
    let sent = ValueLog<Int>()
    let chain = Bind.in(mixed, \.sum).out(key: "k") { sent.values.append($0) }
    let reads = mixed.reads
    mixed.counter.x = 5
    #expect(sent.values == [0, 5])
    #expect(mixed.reads - reads == 1)
    mixed.a = 1
    #expect(sent.values == [0, 5, 6])
    chain.unbind()
  }

  @Test("added under load, an @Observable dependency is watched by its first read")
  func observableDependencyWatchedWhenAddedUnderLoad() {
    let model = SharedModel()
    let mixed = Mixed()
    let held = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let holds = Atomic<Bool>(true)
    let chain = Bind.inout(model, \.value)
      .out(key: "hold") { value in
        if value == -1, holds.exchange(false, ordering: .relaxed) {
          held.signal()
          proceed.wait()
        }
      }
    let setter = startThread { model.value = -1 }
    #expect(held.wait(timeout: .now() + 30) == .success)
    // Its first read waits behind the held delivery; the @Observable part changes meanwhile.
    chain.in(mixed, \.sum)
    mixed.counter.x = 5
    proceed.signal()
    #expect(setter.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(model.value == 5)
    mixed.counter.x = 9
    #expect(model.value == 9)
    mixed.a = 1
    #expect(model.value == 10)
    chain.unbind()
  }

  @Test("a value that is not Equatable is sent once per change")
  func oneSendPerChange() {
    let mixed = Mixed()
    let sent = ValueLog<Int>()
    let chain = Bind.in(mixed, \.boxed).out(key: "k") { sent.values.append($0.value) }
    mixed.a = 1
    mixed.a = 2
    let before = sent.values.count
    mixed.counter.x = 1
    #expect(sent.values.count - before == 1)
    #expect(sent.values.last == 3)
    chain.unbind()
  }

  @Test("a replaced @Observable link is forgotten")
  func replacedObservableLinkIsForgotten() {
    let panel = CounterPanel()
    let old = panel.counter
    let chain = Bind.in(panel, \.x).out(key: "k") { _ in }
    panel.counter = Counter()
    let reads = panel.reads
    old.x = 42
    #expect(panel.reads == reads)
    chain.unbind()
  }

  @Test("an @Observable member added again as out keeps sending")
  func unitedRoleKeepsObserving() {
    let counter = Counter()
    let last = ValueLog<Int>()
    let chain = Bind.in(counter, \.x).out(key: "k") { last.values.append($0) }
    chain.out(counter, \.x)
    counter.x = 7
    #expect(last.values.last == 7)
    chain.unbind()
  }

  // Semantics.md, "Batches": a flat `@Observable` property's set in a batch is read at once and
  // filtered then, as a `@Bound` one's; the chain delivers when the batch ends.
  @Test("in a batch, a flat @Observable member's set is filtered at once, delivered at the end")
  func batchFiltersAFlatObservableSetAtOnce() {
    let settings = Settings()
    let slider = Knob()
    let rejected = LockedBox<[Double]>([])
    let delivered = LockedBox<[Double]>([])
    let chain = Bind.inout(settings, \.volume).out(slider, \.value)
      .filter { $0 <= 1 }
      .onReject { value in rejected.withLock { $0.append(value) } }
      .out(key: "log") { value in delivered.withLock { $0.append(value) } }
    var seen: [Double] = []
    let added = Knob()
    Bind.batch {
      settings.volume = 2
      seen += [settings.volume, Double(rejected.withLock { $0.count })]
      settings.volume = 0.75
      chain.out(added, \.value)  // gets the chain's value at once
      seen += [slider.value, added.value, chain.currentValue]
      settings.volume = 0.25
    }
    #expect(seen == [0.5, 1, 0.5, 0.75, 0.75])
    #expect(rejected.withLock { $0 } == [2])
    #expect(slider.value == 0.25)
    #expect(added.value == 0.25)
    #expect(delivered.withLock { $0 } == [0.5, 0.25])
    chain.unbind()
  }

  // The same in a chain isolated to the main actor, batched there.
  @Test @MainActor func aMainActorChainFiltersAFlatObservableSetInABatchAtOnce() {
    let settings = Settings()
    var calls: [Double] = []
    var rejected: [Double] = []
    let chain = Bind.inout(settings, \.volume)
      .filter { $0 <= 1 }
      .onReject { rejected.append($0) }
      .out(key: "log", initial: false) { calls.append($0) }
    Bind.batch {
      settings.volume = 2
      #expect(settings.volume == 0.5)
      #expect(rejected == [2])
      settings.volume = 0.8
      settings.volume = 0.9
      #expect(calls.isEmpty)
    }
    #expect(calls == [0.9])
    chain.unbind()
  }

  // A computed member is still read once, at the batch's end, whatever it reads.
  @Test("in a batch, a computed member over @Observable properties is read once, at the end")
  func batchReadsAComputedObservableMemberOnceAtTheEnd() {
    let settings = Settings()
    let slider = Knob()
    let chain = Bind.in(settings, \.effectiveVolume).out(slider, \.value)
    let writes = slider.writes
    Bind.batch {
      settings.volume = 0.9
      settings.muted = true
      settings.muted = false
      #expect(slider.value == 0.5)
    }
    #expect(slider.value == 0.9)
    #expect(slider.writes == writes + 1)
    chain.unbind()
  }

  // A batch's set of a flat `@Observable` property while another thread delivers the chain
  // (held in a sink): the change waits for the batch's end, as any change whose chain another
  // thread delivers, and every member ends at the last value.
  @Test("in a batch, a flat @Observable set while another thread delivers the chain: all agree")
  func batchSetWhileAnotherThreadDelivers() {
    let settings = SharedSettings()
    let slider = SharedKnob()
    let hold = HeldOnce()
    let chain = Bind.inout(settings, \.volume).out(slider, \.value)
      .out(key: "held") { _ in _ = hold.holds() }
    hold.arm()
    let other = startThread { settings.volume = 0.1 }
    guard hold.waitReached() else { return }
    Bind.batch {
      settings.volume = 0.3
      #expect(slider.value == 0.1)
      hold.resume()
    }
    #expect(other.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 0.3)
    #expect(slider.value == 0.3)
    chain.unbind()
  }

  // Another thread sets the property while a batch's read of it is held in a filter: the read
  // ends at the older value and the newer one follows; every member ends at it.
  @Test("a flat @Observable set while a batch's read of it is held in a filter: all agree")
  func setWhileABatchedReadIsFiltered() {
    let settings = SharedSettings()
    let slider = SharedKnob()
    let hold = HeldOnce()
    let chain = Bind.inout(settings, \.volume).out(slider, \.value)
      .filter { _ in
        _ = hold.holds()
        return true
      }
    let batching = startThread {
      Bind.batch {
        hold.arm()
        settings.volume = 0.3
      }
    }
    guard hold.waitReached() else { return }
    settings.volume = 0.7
    hold.resume()
    #expect(batching.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(chain.currentValue == 0.7)
    #expect(slider.value == 0.7)
    #expect(settings.volume == 0.7)
    chain.unbind()
  }
}

@Observable
private final class SharedSettings: @unchecked Sendable {
  var volume = 0.5
}

private final class SharedKnob: @unchecked Sendable {
  var value = 0.0
}
