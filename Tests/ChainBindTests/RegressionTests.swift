@_spi(Testing) import ChainBind
import Testing

// Focused tests for bugs found while building ChainBind, one per bug, named after the behaviour
// that was wrong.

private final class ClampedGauge {
  @Bound var level = 0 {
    didSet { if level > 10 { level = 10 } }
  }
}

private struct Opaque {
  var tag: Int
}

private final class OpaqueHolder {
  @Bound var value = Opaque(tag: 1) { didSet { sets += 1 } }
  var sets = 0
}

private class RegressionBase {
  @Bound var x = 5
}

private final class RegressionSub: RegressionBase {
  var doubled: Int {
    get { x * 2 }
    set { x = newValue / 2 }
  }
}

private final class Cell {
  @Bound var value = 0
}

private final class ReactingCell {
  let onSet: (Int) -> Void
  @Bound var value = 0 { didSet { onSet(value) } }

  init(onSet: @escaping (Int) -> Void) {
    self.onSet = onSet
  }
}

private final class Payload {
  let reject: Bool
  let onDeinit: () -> Void
  init(reject: Bool, onDeinit: @escaping () -> Void = {}) {
    self.reject = reject
    self.onDeinit = onDeinit
  }
  deinit { onDeinit() }
}

private final class PayloadCell {
  @Bound var payload: Payload? = nil
}

private final class DeinitAction {
  let action: () -> Void
  init(_ action: @escaping () -> Void) { self.action = action }
  deinit { action() }
}

@Suite struct RegressionTests {
  @Test func aSetterThatClampsTheChainsWriteIsAChangeDeliveredAfterIt() {
    let model = Model()
    let gauge = ClampedGauge()
    var seen: [Int] = []
    Bind.inout(model, \.int).inout(gauge, \.level).out(key: "log") { seen.append($0) }

    model.int = 15

    #expect(gauge.level == 10)
    #expect(model.int == 10)
    #expect(seen == [0, 15, 10])
  }

  @Test func startingAChainDoesNotWriteTheHeadWithItsOwnValue() {
    let holder = OpaqueHolder()

    Bind.inout(holder, \.value)

    #expect(holder.sets == 0)
  }

  @Test func anErrorHandlerSetBeforeUnbindingStillReceivesErrors() throws {
    let log = ErrorLog()
    let chain = Bind.inout(Model(), \.int).onError(log.handler)
    chain.unbind()

    chain.out(Plain(), \.int)

    let error = try #require(log.errors.first)
    #expect(error.cause == .chainInactive)
  }

  // Docs/Semantics.md, "Tracked sources": a computed property is observed through the @Bound
  // properties it reads (0.1 reported it as not observable, and matched it to the wrong storage
  // before that).
  @Test func aSubclassComputedPropertyOverAnInheritedBoundPropertyIsTracked() throws {
    let sub = RegressionSub()
    let log = ErrorLog()
    let model = Model()

    Bind.inout(model, \.int).onError(log.handler).inout(sub, \.doubled)

    #expect(log.errors.isEmpty)
    #expect(sub.x == 0)  // initial sync: doubled = 0
    sub.x = 21
    #expect(model.int == 42)
    model.int = 10
    #expect(sub.x == 5)
  }

  // Issue #26: while `x` was 0, `doubled` (0) equalled it and was bound as `x` itself: sets of
  // `x` then sent `x`'s value. A subclass key path is never taken for the inherited property.
  @Test func aSubclassComputedPropertyEqualAtBindTimeIsNotTakenForTheProperty() {
    let sub = RegressionSub()
    sub.x = 0
    let label = Plain()
    let chain = Bind.in(sub, \RegressionSub.doubled).out(label, \.int)
    #expect(label.int == 0)
    sub.x = 21
    #expect(label.int == 42)
    #expect(chain.currentValue == 42)
    #expect(chain.description.contains("RegressionSub.x") == false)
  }

  @Test func anInheritedBoundPropertyBoundThroughTheSubclassSends() {
    let sub = RegressionSub()
    let model = Model()
    Bind.inout(model, \.int).inout(sub, \.x)

    sub.x = 8

    #expect(model.int == 8)
  }

  @Test func addingAMemberPrunesMembersWhoseObjectsAreGone() {
    let model = Model()
    let chain = Bind.inout(model, \.int)
    do {
      let gone = Plain()
      chain.out(gone, \.int)
    }
    #expect(chain.attachedMemberCount == 2)

    chain.out(Plain(), \.double, convert: { Double($0) })

    #expect(chain.attachedMemberCount == 2)
  }

  @Test func aChainWithoutSendersSurvivesTheDeathOfOneOfItsMembers() {
    let head = Plain()
    let log = ErrorLog()
    let chain = Bind.inout(head, \.int)
    do {
      let gone = Plain()
      chain.onError(log.handler).out(gone, \.int)
    }
    let field = TextField()

    chain.inout(field, \.text, on: .editingChanged)
    field.userTypes("12")

    #expect(chain.isActive)
    #expect(log.errors.isEmpty)
    #expect(head.int == 12)
  }

  @Test func aChainIsReleasedWhenItsLastMemberGoes() {
    let chain: Chain<Int>
    do {
      let head = Plain()
      chain = Bind.inout(head, \.int)
    }

    #expect(chain.memberCount == 0)
    #expect(!chain.isActive)
  }

  @Test func aMemberWhoseOwnChangeIsQueuedKeepsItAndDeliversIt() {
    let first = Cell()
    let last = Cell()
    let middle = ReactingCell { value in if value == 1 { last.value = 5 } }
    var seen: [Int] = []
    let chain = Bind.inout(first, \.value).inout(middle, \.value).inout(last, \.value)
      .out(key: "log") { seen.append($0) }

    first.value = 1

    #expect(seen == [0, 1, 5])
    #expect(first.value == 5)
    #expect(middle.value == 5)
    #expect(last.value == 5)
    chain.unbind()
  }

  @Test func aConvertClosureThatUnbindsItsMemberStopsTheWrite() {
    let model = Model()
    let plain = Plain()
    let chain = Bind.inout(model, \.int)
      .out(
        plain, \.int,
        convert: { value in
          if value == 7 { Bind.unbind(plain, \.int) }
          return value
        })

    model.int = 7

    #expect(plain.int == 0)
    #expect(plain.intWrites == 0)
    chain.unbind()
  }

  @Test func aFilterThatUnbindsTheOriginDoesNotRevertIt() {
    let model = Model()
    let other = Cell()
    let chain = Bind.inout(model, \.int).inout(other, \.value)
      .filter { value in
        if value == 5 { Bind.unbind(model, \.int) }
        return value < 5
      }

    model.int = 5

    #expect(model.int == 5)
    #expect(other.value == 0)
    chain.unbind()
  }

  // Docs/Semantics.md, "Join and move": re-adding a member unites its roles (0.1 replaced the
  // role, so this released the chain).
  @Test func reAddingTheOnlySenderAsOutKeepsItSending() {
    let model = Model()
    let plain = Plain()
    let chain = Bind.inout(model, \.int).out(plain, \.int)

    chain.out(model, \.int)

    #expect(chain.isActive)
    model.int = 3
    #expect(plain.int == 3)
    chain.unbind()
  }

  @Test func aMemberAddedByAFilterGetsTheAcceptedChange() {
    let model = Model()
    let plain = Plain()
    var seen: [Int] = []
    var added = false
    let chain = Bind.inout(model, \.int)
    chain.filter { _ in
      if !added {
        added = true
        chain.out(plain, \.int).out(key: "log") { seen.append($0) }
      }
      return true
    }

    model.int = 9

    #expect(plain.int == 9)
    #expect(seen == [0, 9])
    chain.unbind()
  }

  @Test func aQueuedChangeIsDeliveredEvenIfItsMemberLeftMeanwhile() {
    let source = Cell()
    let other = Cell()
    let plain = Plain()
    var unboundOnce = false
    let chain = Bind.inout(source, \.value).inout(other, \.value).out(plain, \.int)
      .out(key: "react") { value in
        if value == 1 && !unboundOnce {
          unboundOnce = true
          source.value = 2
          Bind.unbind(source, \.value)
        }
      }

    other.value = 1

    #expect(chain.isActive)
    #expect(plain.int == 2)
    #expect(other.value == 2)
    chain.unbind()
  }

  @Test func aSinkThatRemovesItselfIsReleasedOutsideTheChainLock() {
    let model = Cell()
    let chain = Bind.inout(model, \.value)
    var countAtRelease = -1
    do {
      // Its deinit uses the chain: under the chain's lock that would deadlock.
      let watcher = DeinitAction { countAtRelease = chain.memberCount }
      chain.out(key: "once") { value in
        withExtendedLifetime(watcher) {}
        if value == 1 { chain.removeOut(key: "once") }
      }
    }

    model.value = 1

    #expect(countAtRelease == 1)
    chain.unbind()
  }

  @Test func aQueuedChangeIsReleasedOutsideTheChainLock() {
    let cell = PayloadCell()
    let chain = Bind.inout(cell, \.payload).filter { !($0?.reject ?? false) }
    var lockHeldAtRelease: Bool?
    var armed = false
    chain.out(key: "queue") { _ in
      guard armed else { return }
      armed = false
      // Queued behind the change being delivered, then rejected and reverted: the queue's copy
      // is its last reference. Its deinit must run after the chain unlocked.
      cell.payload = Payload(reject: true) {
        lockHeldAtRelease = chain.isLocked
      }
    }
    armed = true

    cell.payload = Payload(reject: false)

    #expect(lockHeldAtRelease == false)
    #expect(cell.payload?.reject == false)
    chain.unbind()
  }

  @Test func aHandlerReplacedDuringADeliveryIsReleasedOutsideTheChainLock() {
    let model = Cell()
    let chain = Bind.inout(model, \.value)
    var countAtRelease = -1
    do {
      let watcher = DeinitAction { countAtRelease = chain.memberCount }
      chain.onError { _ in withExtendedLifetime(watcher) {} }
    }
    chain.out(key: "replace") { value in
      if value == 1 { chain.onError { _ in } }
    }

    model.value = 1

    #expect(countAtRelease == 1)
    chain.unbind()
  }
}
