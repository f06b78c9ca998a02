@_spi(Testing) import ChainBind
import Testing

// Docs/Semantics.md, "Re-entrancy": no echoes, no recursion; changes made while a chain delivers
// are queued; user code never runs under a lock.

/// The order in which members and sinks saw values.
private final class DeliveryLog {
  var entries: [String] = []
}

/// A member whose writes are logged in the delivery order.
private final class LoggingTarget {
  let log: DeliveryLog
  let name: String
  var value = 0 { didSet { log.entries.append("\(name) \(value)") } }

  init(name: String, log: DeliveryLog) {
    self.name = name
    self.log = log
  }
}

/// A @Bound member whose setter changes another @Bound property (of the same chain) when it
/// receives `trigger`.
private final class Relay {
  weak var partner: Model?
  let trigger: Int
  let reply: Int
  var received: [Int] = []
  @Bound var value = 0 {
    didSet {
      received.append(value)
      if value == trigger { partner?.int = reply }
    }
  }

  init(partner: Model, trigger: Int, reply: Int) {
    self.partner = partner
    self.trigger = trigger
    self.reply = reply
  }
}

/// A plain member whose setter unbinds its own chain when it receives `trigger`.
private final class Unbinder {
  var code: ChainCode?
  let trigger: Int
  var value = 0 {
    didSet { if value == trigger, let code { Bind.unbind(code) } }
  }

  init(trigger: Int) {
    self.trigger = trigger
  }
}

/// A model whose computed `value` reads `x`, and runs `hook` once, when it reads 5.
private final class Hooked {
  @Bound var x = 0
  @Bound var y = 0
  var hook: (() -> Void)?
  var value: Int {
    let value = x
    if value == 5, let hook {
      self.hook = nil
      hook()
    }
    return value
  }
}

/// A computed property over `Hooked.y`: a second tracked member, re-read when a getter sets `y`.
private final class Echo {
  let source: Hooked
  init(_ source: Hooked) { self.source = source }
  var value: Int { source.y }
}

/// A control that reports every set of its text as a user edit, even the chain's own writes.
private final class EchoingField: ControlEventSource {
  enum Event { case editingChanged }
  let controlEvents = ControlEvents<Event>()
  var sends = 0
  var text = "" {
    didSet {
      sends += 1
      controlEvents.send(.editingChanged)
    }
  }
}

@Suite struct ReentrancyTests {
  @Suite struct NoEcho {
    @Test func writesIntoBoundMembersDoNotReenterTheChain() {
      let head = Model()
      let member = Model()
      let other = Model()
      var sinkValues: [Int] = []
      Bind.inout(head, \.int).inout(member, \.int).inout(other, \.int)
        .out(key: "log") { sinkValues.append($0) }
      for value in 1...5 { head.int = value }
      member.int = 6
      #expect(head.intSets == 6)
      #expect(member.intSets == 6)
      #expect(other.intSets == 6)
      #expect(sinkValues == [0, 1, 2, 3, 4, 5, 6])
    }

    @Test func everyChangeSetsEachBoundMemberExactlyOnce() {
      let head = Model()
      let member = Model()
      Bind.inout(head, \.string).inout(member, \.string)
      head.string = "a"
      member.string = "b"
      head.string = "c"
      #expect(head.stringSets == 3)
      #expect(member.stringSets == 3)
      #expect(head.string == "c")
      #expect(member.string == "c")
    }

    @Test func controlEventsSentWhileTheChainWritesIntoTheControlAreIgnored() {
      let model = Model()
      let field = EchoingField()
      let plain = Plain()
      var sinkCalls = 0
      Bind.inout(model, \.string)
        .inout(field, \.text, on: .editingChanged)
        .out(plain, \.string)
        .out(key: "count") { _ in sinkCalls += 1 }
      sinkCalls = 0

      model.string = "chain"

      #expect(field.text == "chain")
      #expect(field.sends == 1)
      #expect(sinkCalls == 1)
      #expect(model.stringSets == 1)
      #expect(plain.stringWrites == 1)

      field.text = "user"

      #expect(model.string == "user")
      #expect(model.stringSets == 2)
      #expect(sinkCalls == 2)
      #expect(plain.string == "user")
    }
  }

  @Suite struct Queueing {
    @Test func changeFromASinkIsDeliveredAfterTheCurrentOne() {
      let log = DeliveryLog()
      let model = Model()
      let target = LoggingTarget(name: "member", log: log)
      var depth = 0
      var maxDepth = 0
      Bind.inout(model, \.int)
        .out(target, \.value)
        .out(key: "first") { value in
          depth += 1
          maxDepth = max(maxDepth, depth)
          log.entries.append("first \(value)")
          if value == 1 { model.int = 2 }
          log.entries.append("first done \(value)")
          depth -= 1
        }
        .out(key: "second") { value in log.entries.append("second \(value)") }
      log.entries = []

      model.int = 1

      #expect(
        log.entries == [
          "member 1", "first 1", "first done 1", "second 1",
          "member 2", "first 2", "first done 2", "second 2",
        ])
      #expect(maxDepth == 1)
      #expect(model.int == 2)
      #expect(target.value == 2)
    }

    @Test func severalChangesFromASinkAreDeliveredInOrder() {
      let model = Model()
      let plain = Plain()
      var delivered: [Int] = []
      var depth = 0
      var maxDepth = 0
      Bind.inout(model, \.int)
        .out(plain, \.int)
        .out(key: "chain") { value in
          depth += 1
          maxDepth = max(maxDepth, depth)
          delivered.append(value)
          if value == 1 {
            model.int = 10
            model.int = 20
          }
          if value == 10 { model.int = 30 }
          depth -= 1
        }
      delivered = []

      model.int = 1

      #expect(delivered == [1, 10, 20, 30])
      #expect(maxDepth == 1)
      #expect(plain.int == 30)
      #expect(plain.intWrites == 4)
      #expect(model.int == 30)
    }

    @Test func changeFromAMembersSetterIsQueuedAfterTheCurrentOne() {
      let head = Model()
      let partner = Model()
      let relay = Relay(partner: partner, trigger: 1, reply: 2)
      var delivered: [Int] = []
      var partnerValuesSeen: [Int] = []
      var depth = 0
      var maxDepth = 0
      Bind.inout(head, \.int)
        .inout(partner, \.int)
        .inout(relay, \.value)
        .out(key: "log") { value in
          depth += 1
          maxDepth = max(maxDepth, depth)
          delivered.append(value)
          partnerValuesSeen.append(partner.int)
          depth -= 1
        }
      delivered = []
      partnerValuesSeen = []

      head.int = 1

      #expect(delivered == [1, 2])
      #expect(partnerValuesSeen == [2, 2])
      #expect(maxDepth == 1)
      #expect(relay.received == [1, 2])
      #expect(head.int == 2)
      #expect(partner.int == 2)
      #expect(relay.value == 2)
      #expect(head.intSets == 2)
      #expect(partner.intSets == 2)
    }
  }

  /// How user code that runs for a member's change changes another member of the chain.
  enum SideChange: CaseIterable {
    case set, setInABatch, setInAFilteredChain
  }

  /// What sends a converted value.
  enum ConvertingSender: CaseIterable {
    case boundProperty, control
  }

  @Suite struct WorkForAChange {
    @Test(
      "a change a tracked member's getter makes is delivered after the value the getter read",
      arguments: SideChange.allCases)
    func changeFromAGetterWaitsForTheValueItRead(_ how: SideChange) {
      let model = Hooked()
      let plain = Plain()
      var delivered: [Int] = []
      let chain = Bind.in(model, \.value).inout(model, \.y).out(plain, \.int)
      if how == .setInAFilteredChain { chain.filter { _ in true } }
      chain.out(key: "log") { delivered.append($0) }
      model.hook = {
        if how == .setInABatch { Bind.batch { model.y = 8 } } else { model.y = 8 }
      }

      model.x = 5

      #expect(delivered == [0, 5, 8])
      #expect(model.y == 8)
      #expect(plain.int == 8)
      #expect(chain.currentValue == 8)
      chain.unbind()
    }

    @Test(
      "another tracked member's re-read that a getter causes is delivered after the getter's value",
      arguments: [false, true])
    func rereadFromAGetterWaitsForTheValueItRead(filtered: Bool) {
      let model = Hooked()
      let echo = Echo(model)
      let plain = Plain()
      var delivered: [Int] = []
      let chain = Bind.in(model, \.value).in(echo, \.value).out(plain, \.int)
      if filtered { chain.filter { _ in true } }
      chain.out(key: "log") { delivered.append($0) }
      model.hook = { model.y = 8 }

      model.x = 5

      #expect(delivered == [0, 5, 8])
      #expect(plain.int == 8)
      #expect(chain.currentValue == 8)
      chain.unbind()
    }

    @Test(
      "a change a conversion makes is delivered after the value it converts",
      arguments: ConvertingSender.allCases, [false, true])
    func changeFromAConversionWaitsForTheValueItConverts(
      _ sender: ConvertingSender, filtered: Bool
    ) {
      let head = Model()
      let text = Model()
      let field = TextField()
      let plain = Plain()
      var delivered: [Int] = []
      var conversions = 0
      let back: (String) -> Int? = { string in
        conversions += 1
        if string == "5" && conversions == 1 { head.int = 8 }
        return Int(string)
      }
      let chain = Bind.inout(head, \.int).out(plain, \.int)
      switch sender {
      case .boundProperty: chain.inout(text, \.string, convert: { "\($0)" }, back: back)
      case .control:
        chain.inout(field, \.text, on: .editingChanged, convert: { "\($0)" }, back: back)
      }
      if filtered { chain.filter { _ in true } }
      chain.out(key: "log") { delivered.append($0) }

      switch sender {
      case .boundProperty: text.string = "5"
      case .control: field.userTypes("5")
      }

      #expect(delivered == [0, 5, 8])
      #expect(conversions == 1)
      #expect(head.int == 8)
      #expect(plain.int == 8)
      #expect((sender == .boundProperty ? text.string : field.text) == "8")
      chain.unbind()
    }
  }

  @Suite struct OtherChains {
    @Test func sinkMayBindUnbindAndChangeOtherChains() throws {
      let trigger = Model()
      let changedHead = Model()
      let changedTarget = Plain()
      let changed = Bind.inout(changedHead, \.int).out(changedTarget, \.int)
      let doomedHead = Model()
      let doomedTarget = Plain()
      let doomed = Bind.inout(doomedHead, \.int).out(doomedTarget, \.int)
      let newHead = Model()
      let newTarget = Plain()
      var created: Chain<Int>?

      Bind.inout(trigger, \.int).out(key: "other chains") { value in
        guard value == 1 else { return }
        created = Bind.inout(newHead, \.int).out(newTarget, \.int)
        changedHead.int = 5
        Bind.unbind(doomed.code)
      }
      trigger.int = 1

      let newChain = try #require(created)
      #expect(newChain.isActive)
      newHead.int = 9
      #expect(newTarget.int == 9)
      #expect(changedTarget.int == 5)
      changedHead.int = 6
      #expect(changedTarget.int == 6)
      #expect(changed.isActive)
      #expect(!doomed.isActive)
      doomedHead.int = 3
      #expect(doomedTarget.intWrites == 0)
    }

    @Test func sinkMayAddMembersToItsOwnChain() {
      let model = Model()
      let late = Plain()
      let chain = Bind.inout(model, \.int)
      chain.out(key: "adds") { value in
        if value == 1 { chain.out(late, \.int) }
      }
      model.int = 1
      #expect(late.int == 1)
      model.int = 2
      #expect(late.int == 2)
      #expect(chain.memberCount == 2)
    }

    @Test func settersMayChangeOtherChains() {
      let first = Model()
      let second = Model()
      let secondTarget = Plain()
      let relay = Relay(partner: second, trigger: 4, reply: 40)
      Bind.inout(second, \.int).out(secondTarget, \.int)
      Bind.inout(first, \.int).inout(relay, \.value)
      first.int = 4
      #expect(relay.value == 4)
      #expect(second.int == 40)
      #expect(secondTarget.int == 40)
      #expect(first.int == 4)
    }
  }

  @Suite struct UnbindingWhileDelivering {
    @Test func sinkThatUnbindsItsOwnChainStopsTheRestOfTheDelivery() {
      let model = Model()
      var laterCalls: [Int] = []
      let chain = Bind.inout(model, \.int)
      chain
        .out(key: "unbinds") { value in if value == 1 { chain.unbind() } }
        .out(key: "later") { laterCalls.append($0) }
      #expect(laterCalls == [0])

      model.int = 1
      model.int = 2

      #expect(!chain.isActive)
      #expect(laterCalls == [0])
    }

    @Test func memberThatUnbindsItsOwnChainStopsTheRestOfTheDelivery() {
      let model = Model()
      let unbinder = Unbinder(trigger: 1)
      let later = Plain()
      var sinkCalls = 0
      let chain = Bind.inout(model, \.int)
        .out(unbinder, \.value)
        .out(later, \.int)
        .out(key: "count") { _ in sinkCalls += 1 }
      unbinder.code = chain.code
      sinkCalls = 0

      model.int = 1

      #expect(unbinder.value == 1)
      #expect(!chain.isActive)
      #expect(later.intWrites == 0)
      #expect(later.int == 0)
      #expect(sinkCalls == 0)
    }

    @Test func changesQueuedBeforeTheChainUnboundItselfAreDropped() {
      let model = Model()
      let plain = Plain()
      var delivered: [Int] = []
      let chain = Bind.inout(model, \.int).out(plain, \.int)
      chain.out(key: "queue then unbind") { value in
        delivered.append(value)
        if value == 1 {
          model.int = 2
          chain.unbind()
        }
      }
      delivered = []

      model.int = 1

      #expect(delivered == [1])
      #expect(plain.int == 1)
      #expect(plain.intWrites == 1)
    }
  }
}
