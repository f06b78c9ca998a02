@_spi(Testing) import ChainBind
import Synchronization
import Testing

// Docs/Semantics.md, "Tracing": a chain's description, its sink count and its reject handler.

@Suite struct InspectionTests {
  @Suite struct Description {
    @Test func namesCodeValueMembersFiltersAndSinks() {
      let model = Model(string: "777")
      let label = Display()
      let field = TextField()
      let chain = Bind.inout(model, \.string)
        .out(label, \.text)
        .inout(field, \.placeholder, on: .editingChanged)
        .filter { $0.count <= 3 }
        .out(key: "log") { _ in }
      #expect(
        chain.description
          == "\(chain.code) = \"777\": inout Model.string, out Display.text,"
          + " inout TextField.placeholder on editingChanged; 1 filter; sinks: log")
      chain.unbind()
    }

    // A value, or a sink's key, with line breaks: the description stays one line, the breaks
    // escaped as in a Swift literal.
    @Test func isOneLineWhateverTheValueOrKeys() {
      let model = Model(string: "a\nb \"c\"\u{2028}")
      let chain = Bind.inout(model, \.string).out(key: "x\ry") { _ in }
      #expect(
        chain.description
          == "\(chain.code) = \"a\\nb \"c\"\\u{2028}\": inout Model.string; 0 filters;"
          + " sinks: x\\ry")
      chain.unbind()
    }

    @Test func showsTheCurrentValueAndSinksInOrder() {
      let model = Model()
      let owner = Plain()
      let chain = Bind.in(model, \.int)
        .out(key: "a") { _ in }
        .out(owner, key: "render") { _, _ in }
        .out(key: "b") { _ in }
      model.int = 42
      #expect(
        chain.description
          == "\(chain.code) = 42: in Model.int; 0 filters; sinks: a, out(Plain), b")
      chain.unbind()
    }

    @Test func describingTheValueRunsNoUserCodeUnderTheLock() {
      let holder = ProbeHolder()
      let chain = Bind.inout(holder, \.probe)
      LockProbe.chain.withLock { $0 = chain }
      #expect(chain.description.contains("probe"))
      #expect(LockProbe.described.load(ordering: .relaxed) == 1)
      #expect(LockProbe.sawLocked.load(ordering: .relaxed) == false)
      LockProbe.chain.withLock { $0 = nil }  // nothing of the chain kept past the test
      chain.unbind()
    }
  }

  @Suite struct SinkCount {
    @Test func countsKeyedOwnedAndListSinks() {
      let model = Model()
      let owner = Plain()
      let chain = Bind.inout(model, \.int)
      #expect(chain.sinkCount == 0)
      chain.out(key: "a") { _ in }.out(owner, key: "o") { _, _ in }
      #expect(chain.sinkCount == 2)
      chain.out(key: "a") { _ in }  // replaces
      #expect(chain.sinkCount == 2)
      chain.removeOut(key: "a")
      #expect(chain.sinkCount == 1)
      chain.unbind()
      #expect(chain.sinkCount == 0)
    }

    @Test func countsListSinks() {
      let list = ListModel()
      let chain = Bind.inout(list, \.items).outChanges(key: "rows") { (_: ListChange<Int>) in }
      #expect(chain.sinkCount == 1)
      chain.unbind()
    }

    @Test func anOwnedSinkWhoseOwnerIsGoneIsNotCounted() {
      let model = Model()
      let chain = Bind.inout(model, \.int)
      do {
        let owner = Plain()
        chain.out(owner, key: "o") { _, _ in }
        #expect(chain.sinkCount == 1)
      }
      #expect(chain.sinkCount == 0)
      chain.unbind()
    }
  }

  @Suite struct OnReject {
    @Test func isCalledWithTheRejectedValueAfterTheRevert() {
      let model = Model(string: "12")
      let field = TextField()
      var seen: [(value: String, fieldText: String)] = []
      Bind.inout(model, \.string)
        .inout(field, \.text, on: .editingChanged)
        .filter { $0.count <= 3 }
        .onReject { value in seen.append((value, field.text)) }
      field.userTypes("1234")
      #expect(seen.map(\.value) == ["1234"])
      #expect(seen.map(\.fieldText) == ["12"])  // reverted first
      field.userTypes("123")
      #expect(seen.count == 1)  // accepted: not called
      Bind.unbind(model)
    }

    @Test func theLastHandlerSetWins() {
      let model = Model()
      var first = 0
      var second = 0
      Bind.inout(model, \.int)
        .filter { $0 >= 0 }
        .onReject { _ in first += 1 }
        .onReject { _ in second += 1 }
      model.int = -1
      #expect(first == 0)
      #expect(second == 1)
      Bind.unbind(model)
    }

    @Test func onAnInactiveChainIsReported() {
      let model = Model()
      let log = ErrorLog()
      let chain = Bind.inout(model, \.int).onError(log.handler)
      chain.unbind()
      chain.onReject { _ in }
      #expect(log.errors.map(\.member) == ["onReject"])
      #expect(log.errors.map(\.cause) == [.chainInactive])
    }
  }
}

/// A list model for list sinks.
final class ListModel {
  @Bound var items: [Int] = []
}

/// A value that, when described, checks whether its chain's lock is held.
private struct LockProbe: Equatable, CustomStringConvertible {
  static let chain = LockedBox<Chain<LockProbe>?>(nil)
  static let described = Atomic<Int>(0)
  static let sawLocked = Atomic<Bool>(false)

  var description: String {
    Self.described.add(1, ordering: .relaxed)
    if let chain = Self.chain.withLock({ $0 }), chain.isLocked {
      Self.sawLocked.store(true, ordering: .relaxed)
    }
    return "probe"
  }
}

private final class ProbeHolder {
  @Bound var probe = LockProbe()
}
