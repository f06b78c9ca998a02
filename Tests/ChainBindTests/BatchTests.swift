import ChainBind
import Dispatch
import Testing

// Docs/Semantics.md, "Batches": in `Bind.batch`, changes are filtered at once and become their
// chains' values; each chain changed delivers once when the outermost batch ends.

private final class Form {
  @Bound var username = ""
  @Bound var password = ""
  @Bound var rows: [Int] = []
  var reads = 0
  var canLogIn: Bool {
    reads += 1
    return !username.isEmpty && password.count >= 6
  }
}

private struct Failure: Error {}

/// A value that is not `Equatable`: every write into it runs its setter.
private struct Score {
  var points: Int
}

/// Counts the sets of its `@Bound` property, the user's and the chain's.
private final class Scoreboard {
  var sets = 0
  @Bound var score = Score(points: 0) {
    didSet { sets += 1 }
  }
}

@Suite struct BatchTests {
  @Test func eachChainDeliversOnceWithItsLastValue() {
    let model = Model()
    let label = Display()
    var calls: [Int] = []
    let chain = Bind.inout(model, \.int).out(label, \.number).out(key: "log") { calls.append($0) }
    Bind.batch {
      model.int = 1
      model.int = 2
      model.int = 3
    }
    #expect(label.number == 3)
    #expect(calls == [0, 3])
    chain.unbind()
  }

  @Test func receiversShowTheOldValuesWhileTheBatchRuns() {
    let model = Model(int: 1)
    let label = Display()
    let chain = Bind.inout(model, \.int).out(label, \.number)
    var seen: [Int] = []
    Bind.batch {
      model.int = 2
      seen.append(label.number)
    }
    #expect(seen == [1])
    #expect(label.number == 2)
    chain.unbind()
  }

  // A member added in the batch gets the chain's value as its initial sync, at once; the
  // members already there are written when the batch ends.
  @Test func aMemberAddedInTheBatchGetsTheValueAtOnce() {
    let model = Model(int: 1)
    let label = Display()
    let added = Display()
    let chain = Bind.inout(model, \.int).out(label, \.number)
    var seen: [Int] = []
    Bind.batch {
      model.int = 2
      chain.out(added, \.number)
      seen = [label.number, added.number]
    }
    #expect(seen == [1, 2])
    #expect(label.number == 2)
    #expect(added.number == 2)
    chain.unbind()
  }

  @Test func chainsDeliverInTheOrderTheyWereFirstChanged() {
    let first = Model()
    let second = Model()
    var order: [String] = []
    let a = Bind.inout(first, \.int).out(key: "a", initial: false) { _ in order.append("a") }
    let b = Bind.inout(second, \.int).out(key: "b", initial: false) { _ in order.append("b") }
    Bind.batch {
      second.int = 1
      first.int = 1
      second.int = 2
    }
    #expect(order == ["b", "a"])
    a.unbind()
    b.unbind()
  }

  @Test func anEarlierSenderIsWrittenWithTheFinalValue() {
    let left = Model()
    let right = Model()
    let chain = Bind.inout(left, \.int).inout(right, \.int)
    Bind.batch {
      left.int = 1
      right.int = 2
    }
    #expect(left.int == 2)
    #expect(right.int == 2)
    chain.unbind()
  }

  @Test func aRejectedChangeIsRevertedAtOnce() {
    let model = Model(int: 1)
    let label = Display()
    var rejected: [Int] = []
    let chain = Bind.inout(model, \.int).out(label, \.number)
      .filter { $0 < 10 }
      .onReject { rejected.append($0) }
    var seen = -1
    Bind.batch {
      model.int = 50
      seen = model.int
      model.int = 5
    }
    #expect(seen == 1)
    #expect(rejected == [50])
    #expect(label.number == 5)
    chain.unbind()
  }

  @Test("a converted member's sets in a batch are delivered once, at its end")
  func aConvertedMembersSetsAreDeliveredAtTheEnd() {
    let head = Model()
    let text = Model()
    let plain = Plain()
    var delivered: [Int] = []
    let chain = Bind.inout(head, \.int).out(plain, \.int)
      .inout(text, \.string, convert: { "\($0)" }, back: { Int($0) })
      .out(key: "log") { delivered.append($0) }
    var shownInBatch = -1
    Bind.batch {
      text.string = "5"
      text.string = "6"
      shownInBatch = plain.int
    }
    #expect(shownInBatch == 0)
    #expect(delivered == [0, 6])
    #expect(head.int == 6)
    #expect(plain.int == 6)
    chain.unbind()
  }

  @Test("the member that made a batch's last change is not written back after a revert")
  func theLastSenderIsNotWrittenBackAfterARevert() {
    let board = Scoreboard()
    let other = Scoreboard()
    let chain = Bind.inout(board, \.score).inout(other, \.score).filter { $0.points < 10 }
    board.sets = 0
    other.sets = 0
    Bind.batch {
      board.score = Score(points: 1)
      board.score = Score(points: 50)  // rejected: reverted to 1 at once
    }
    // Two sets and the revert; the batch's delivery writes only the other end.
    #expect(board.sets == 3)
    #expect(other.sets == 1)
    #expect(board.score.points == 1)
    #expect(other.score.points == 1)
    chain.unbind()
  }

  @Test func aTrackedMemberIsReadOnceAndAListSinkGetsOneChange() {
    let form = Form()
    let button = Display()
    var changes: [ListChange<Int>] = []
    let login = Bind.in(form, \.canLogIn).out(button, \.number) { $0 ? 1 : 0 }
    let rows = Bind.inout(form, \.rows).outChanges(key: "rows", initial: false) {
      changes.append($0)
    }
    let reads = form.reads
    Bind.batch {
      form.username = "ann"
      form.password = "secret1"
      form.rows = [1]
      form.rows = [1, 2]
    }
    #expect(form.reads - reads == 1)
    #expect(button.number == 1)
    #expect(changes.count == 1)
    #expect(changes.first?.old == [])
    #expect(changes.first?.new == [1, 2])
    login.unbind()
    rows.unbind()
  }

  @Test func nestedBatchesJoinTheOutermost() {
    let model = Model()
    var calls: [Int] = []
    let chain = Bind.inout(model, \.int).out(key: "log", initial: false) { calls.append($0) }
    Bind.batch {
      model.int = 1
      Bind.batch { model.int = 2 }
      #expect(calls.isEmpty)
      model.int = 3
    }
    #expect(calls == [3])
    chain.unbind()
  }

  @Test func aThrowingBodyStillDeliversThenRethrows() {
    let model = Model()
    let label = Display()
    let chain = Bind.inout(model, \.int).out(label, \.number)
    #expect(throws: Failure.self) {
      try Bind.batch {
        model.int = 4
        throw Failure()
      }
    }
    #expect(label.number == 4)
    #expect(model.int == 4)
    chain.unbind()
  }

  @Test func returnsWhatTheBodyReturns() {
    #expect(Bind.batch { 42 } == 42)
  }

  @Test func aBatchInASinkDoesNotDeadlockOrReorder() {
    let model = Model()
    let other = Model()
    let label = Display()
    var calls: [Int] = []
    let otherChain = Bind.inout(other, \.int).out(label, \.number)
    let chain = Bind.inout(model, \.int)
      .out(key: "batch", initial: false) { value in
        Bind.batch {
          other.int = value * 10
          if value == 1 { model.int = 2 }  // the delivering chain: queued, as without a batch
        }
      }
      .out(key: "log", initial: false) { calls.append($0) }
    model.int = 1
    #expect(calls == [1, 2])
    #expect(label.number == 20)
    chain.unbind()
    otherChain.unbind()
  }

  @Test func aChangeOnAnotherThreadIsNotBatched() async {
    let model = SendableModel()
    let label = SendableDisplay()
    let chain = Bind.inout(model, \.int).out(label, \.number)
    let done = DispatchSemaphore(value: 0)
    var seenInBatch = -1
    Bind.batch {
      // Inherits the batch (a task-local value), but runs on another thread.
      Task {
        model.int = 7
        done.signal()
      }
      done.wait()
      seenInBatch = label.number
    }
    #expect(seenInBatch == 7)
    chain.unbind()
  }

  @Test func aBatchIsTracedAsOneDelivery() {
    let model = Model()
    let label = Display()
    var events: [ChainEvent.Kind] = []
    let chain = Bind.inout(model, \.int).out(label, \.number).trace { events.append($0.kind) }
    Bind.batch {
      model.int = 1
      model.int = 2
    }
    #expect(
      events == [
        .changeReceived(from: "Model.int", value: "1"),
        .changeReceived(from: "Model.int", value: "2"),
        .memberWritten(member: "Display.number", value: "2"),
      ])
    chain.unbind()
  }
}

private final class SendableModel: @unchecked Sendable {
  @Bound var int = 0
}

private final class SendableDisplay: @unchecked Sendable {
  var number = 0
}

@Suite struct BatchIsolationTests {
  @Test @MainActor func aMainActorChainBatchedOnTheMainActorDeliversOnce() {
    let model = Model()
    var calls: [Int] = []
    let chain = Bind.inout(model, \.int).out(key: "log", initial: false) { calls.append($0) }
    Bind.batch {
      model.int = 1
      model.int = 2
      #expect(calls.isEmpty)
    }
    #expect(calls == [2])
    chain.unbind()
  }
}
