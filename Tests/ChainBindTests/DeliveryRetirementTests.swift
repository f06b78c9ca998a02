@_spi(Testing) import ChainBind
import Testing

// A delivery reads its chain's members without retaining them: a member that leaves the chain
// while the delivery runs (unbound, replaced, its chain released) is kept until the delivery
// ends, and is not written after it left. Under AddressSanitizer (.ci/run), a member freed too
// early is a use after free.

/// A target whose setter runs `action` once, when it receives `trigger`.
private final class Trigger {
  let trigger: Int
  var action: () -> Void = {}
  var value = 0 {
    didSet {
      if value == trigger {
        action()
        action = {}
      }
    }
  }

  init(trigger: Int) { self.trigger = trigger }
}

/// A target that counts its writes.
private final class Counted {
  var writes = 0
  var value = 0 { didSet { writes += 1 } }
}

@Suite("Members leaving a chain while it delivers")
struct DeliveryRetirementTests {
  // How many members follow the one whose write makes the others leave: the first two members
  // are held in the chain itself, the rest in an array.
  @Test(
    "unbound by an earlier member's write: kept until the delivery ends, not written",
    arguments: [1, 2, 4])
  func unboundDuringDelivery(followers: Int) {
    let model = Model()
    let trigger = Trigger(trigger: 7)
    let followerObjects = (0..<followers).map { _ in Counted() }
    var chain = Bind.inout(model, \.int).out(trigger, \.value)
    for follower in followerObjects { chain = chain.out(follower, \.value) }
    let writesBefore = followerObjects.map(\.writes)
    var keptDuring = -1
    trigger.action = {
      for follower in followerObjects { Bind.unbind(follower) }
      keptDuring = chain.membersKeptForDelivery
    }

    model.int = 7

    #expect(keptDuring == followers)
    #expect(chain.membersKeptForDelivery == 0)
    #expect(followerObjects.map(\.writes) == writesBefore)
    #expect(chain.attachedMemberCount == 2)
    model.int = 8
    #expect(trigger.value == 8)
    #expect(followerObjects.map(\.writes) == writesBefore)
  }

  @Test("the chain released by a member's write: the rest is not written, and nothing is kept")
  func releasedDuringDelivery() {
    let model = Model()
    let trigger = Trigger(trigger: 3)
    let after = Counted()
    let chain = Bind.inout(model, \.int).out(trigger, \.value).out(after, \.value)
    let writesBefore = after.writes
    var keptDuring = -1
    trigger.action = {
      chain.unbind()
      keptDuring = chain.membersKeptForDelivery
    }

    model.int = 3

    #expect(keptDuring == 3)
    #expect(chain.membersKeptForDelivery == 0)
    #expect(after.writes == writesBefore)
    #expect(!chain.isActive)
  }

  @Test("a member moved to another chain during the delivery is kept, then released")
  func movedDuringDelivery() {
    let model = Model()
    let other = Model()
    let trigger = Trigger(trigger: 5)
    let moved = Counted()
    let chain = Bind.inout(model, \.int).out(trigger, \.value).out(moved, \.value)
    let otherChain = Bind.inout(other, \.int)
    var keptDuring = -1
    trigger.action = {
      otherChain.out(moved, \.value)
      keptDuring = chain.membersKeptForDelivery
    }

    model.int = 5

    #expect(keptDuring == 1)
    #expect(chain.membersKeptForDelivery == 0)
    #expect(moved.value == other.int)
    other.int = 9
    #expect(moved.value == 9)
    model.int = 6
    #expect(moved.value == 9)
  }

  @Test("a member that leaves when no delivery runs is not kept")
  func notDelivering() {
    let model = Model()
    let target = Counted()
    let other = Counted()
    let chain = Bind.inout(model, \.int).out(target, \.value).out(other, \.value)
    Bind.unbind(target)
    #expect(chain.membersKeptForDelivery == 0)
    #expect(chain.attachedMemberCount == 2)
    withExtendedLifetime(other) {}
  }
}

/// A target that logs its writes, by name, into a shared log.
private final class Logged {
  let name: String
  let log: Log
  var value = 0 { didSet { log.entries.append(name) } }

  init(_ name: String, _ log: Log) {
    self.name = name
    self.log = log
  }
}

private final class Log {
  var entries: [String] = []
}

@Suite("Member order after members leave")
struct MemberOrderTests {
  // The chain keeps its first two members in itself and the rest in an array: whichever member
  // leaves, the others keep the order they were added in (Docs/Semantics.md, "Order").
  @Test("the others keep their order", arguments: 0..<5)
  func orderAfterRemoval(leaving: Int) {
    let model = Model()
    let log = Log()
    let targets = (0..<5).map { Logged("t\($0)", log) }
    var chain = Bind.inout(model, \.int)
    for target in targets { chain = chain.out(target, \.value) }
    Bind.unbind(targets[leaving])
    log.entries = []

    model.int = 1

    #expect(log.entries == targets.indices.filter { $0 != leaving }.map { "t\($0)" })
    #expect(chain.attachedMemberCount == 5)
  }

  @Test("a member added after others left goes last")
  func addedAfterRemoval() {
    let model = Model()
    let log = Log()
    let targets = (0..<4).map { Logged("t\($0)", log) }
    let chain = Bind.inout(model, \.int).out(targets[0], \.value).out(targets[1], \.value)
      .out(targets[2], \.value)
    Bind.unbind(targets[0])
    chain.out(targets[3], \.value)
    log.entries = []

    model.int = 1

    #expect(log.entries == ["t1", "t2", "t3"])
  }
}
