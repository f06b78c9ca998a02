import ChainBind
import Dispatch
import Synchronization
import Testing

// Docs/Semantics.md, "Chains and members" and "What is observable": what BindingError reports, and
// where it goes.

/// Errors collected from any thread.
private final class ErrorCollector: Sendable {
  private let errors = LockedBox<[BindingError]>([])

  func append(_ error: BindingError) {
    errors.withLock { $0.append(error) }
  }

  func errors(of code: ChainCode) -> [BindingError] {
    errors.withLock { errors in errors.filter { $0.chain == code } }
  }

  func errors(ofMember member: String) -> [BindingError] {
    errors.withLock { errors in errors.filter { $0.member.hasPrefix(member) } }
  }
}

/// A plain (not observable) property whose getter holds the first reader once armed.
private final class HeldPlain: @unchecked Sendable {
  let hold = HeldOnce()
  private let stored = LockedBox(0)
  var value: Int {
    get {
      _ = hold.holds()
      return stored.withLock { $0 }
    }
    set { stored.withLock { $0 = newValue } }
  }
}

/// Requires, at compile time, an error that may cross concurrency domains.
private func sendableError<E: Error & Sendable>(_ error: E) -> E { error }

@Suite struct ErrorTests {
  @Suite struct NotObservable {
    @Test(arguments: SendingRole.allCases)
    func plainPropertyBoundToSendIsReportedAndStillReceives(role: SendingRole) throws {
      let model = Model(int: 3)
      let plain = Plain()
      let log = ErrorLog()
      let chain = Bind.inout(model, \.int).onError(log.handler)
      switch role {
      case .inout: chain.inout(plain, \.int)
      case .in: chain.in(plain, \.int)
      }

      let error = try #require(log.errors.first)
      #expect(log.errors.count == 1)
      #expect(error.cause == .notObservable)
      #expect(error.description.hasSuffix("on:; it only receives"))
      #expect(error.chain == chain.code)
      #expect(error.member.hasPrefix("Plain."))
      #expect(chain.memberCount == 2)
      #expect(plain.int == 3)

      model.int = 5
      #expect(plain.int == 5)
      plain.int = 9
      #expect(model.int == 5)
      #expect(log.errors.count == 1)
    }

    @Test func readOnlyPlainPropertyBoundToSendIsReportedAndNotBound() throws {
      let model = Model(int: 1)
      let log = ErrorLog()
      let plain = Plain()
      let chain = Bind.inout(model, \.int).onError(log.handler).in(plain, \.readOnlyInt)

      let error = try #require(log.errors.first)
      #expect(log.errors.count == 1)
      #expect(error.cause == .notObservable)
      #expect(error.member == "Plain.readOnlyInt")
      #expect(error.description.hasSuffix("its key path is read-only: it was not bound"))
      #expect(chain.memberCount == 1)
      model.int = 2
      #expect(log.errors.count == 1)
    }

    @Test func addingToAChainWhoseHeadWasNotBoundSaysSoNotThatItWasUnbound() throws {
      let plain = Plain()
      let target = Plain()
      let log = ErrorLog()
      let chain = Bind.in(plain, \.readOnlyInt).onError(log.handler)
        .out(target, \.int)
        .out(key: "sink") { _ in }
        .filter { _ in true }
      #expect(log.errors.map(\.cause) == [.headNotBound, .headNotBound, .headNotBound])
      #expect(chain.isActive == false)
      let text = try #require(log.errors.first).description
      #expect(text.contains("its head could not be bound"))
      #expect(!text.contains("unbound"))
    }

    /// How a chain ends.
    enum Ending: String, CaseIterable, CustomTestStringConvertible {
      case unbind, unbindByCode, senderDeallocated, senderUnbound, senderMoved
      var testDescription: String { rawValue }
    }

    // The description says how the chain ended: unbound, or its last sender gone.
    @Test(arguments: Ending.allCases)
    func anAdditionToAnEndedChainSaysHowItEnded(_ ending: Ending) {
      let log = ErrorLog()
      let model = Model()
      let other = Model()
      let chain: Chain<Int>
      if ending == .senderDeallocated {
        let dying = Model()
        chain = Bind.inout(dying, \.int).onError(log.handler)
      } else {
        chain = Bind.inout(model, \.int).onError(log.handler)
      }
      switch ending {
      case .unbind: chain.unbind()
      case .unbindByCode: Bind.unbind(chain.code)
      case .senderDeallocated: break
      case .senderUnbound: Bind.unbind(model)
      case .senderMoved: Bind.inout(other, \.int).inout(model, \.int)
      }
      #expect(!chain.isActive)

      chain.out(Plain(), \.int)

      #expect(log.errors.map(\.cause) == [.chainInactive])
      let text = log.errors.first?.description ?? ""
      let unbound = ending == .unbind || ending == .unbindByCode
      #expect(text.contains(unbound ? "(it was unbound)" : "(its last sending member is gone)"))
      #expect(text.contains("no longer active") && text.contains("nothing was added"))
      Bind.unbind(other)
    }

    @Test func anAdditionToAnUnboundChainNamesTheBoundPropertyItWasFor() {
      let model = Model()
      let other = Model()
      let log = ErrorLog()
      let chain = Bind.in(model, \.bool).onError(log.handler)
      chain.unbind()
      chain.out(other, \.bool)
      chain.in(other, \.string)
      #expect(log.errors.map(\.cause) == [.chainInactive, .chainInactive])
      #expect(log.errors.map(\.member) == ["Model.bool", "Model.string"])
      // Nothing of the refused additions stays: the property binds as any other.
      let plain = Plain()
      let next = Bind.in(other, \.string).out(plain, \.string)
      other.string = "x"
      #expect(plain.string == "x")
      #expect(next.memberCount == 2)
      next.unbind()
    }

    @Test func boundAndControlSendersReportNothing() {
      let model = Model()
      let other = Model()
      let field = TextField()
      let log = ErrorLog()
      Bind.inout(model, \.string).onError(log.handler)
        .inout(other, \.string)
        .in(other, \.optionalString)
        .inout(field, \.text, on: .editingChanged)
      #expect(log.errors.isEmpty)
    }
  }

  @Suite struct Description {
    @Test func descriptionNamesTheChainTheMemberAndTheCause() throws {
      let model = Model()
      let plain = Plain()
      // `Plain.int` has observers, so its key path prints as `<computed Int>` on Linux: labels
      // print what the key path says (Docs/Semantics.md, "Member names").
      let log = ErrorLog()
      let chain = Bind.inout(model, \.int).onError(log.handler).inout(plain, \.int)

      let error = try #require(log.errors.first)
      let text = error.description
      #expect(text.contains(chain.code.description))
      #expect(text.contains("Plain.") && text.contains("Int"))
      #expect(text.contains(BindingError.Cause.notObservable.description))
      #expect(chain.code.description.contains("Model.int"))
      #expect(!text.contains("\n"))
    }

    @Test func memberIsNamedByItsTypeAndKeyPath() throws {
      let model = Model()
      let plain = Plain()
      let log = ErrorLog()
      let chain = Bind.inout(model, \.float).onError(log.handler).inout(plain, \.float)
      let error = try #require(log.errors.first)
      #expect(error.member == "Plain.float")
      #expect(error.description.contains("Plain.float"))
      #expect(error.description.contains(chain.code.description))
    }

    @Test func conversionFailureCarriesValueAndTypes() throws {
      let model = Model()
      let plain = Plain()
      let other = Plain()
      let log = ErrorLog()
      Bind.inout(model, \.string).onError(log.handler).out(plain, \.int).out(other, \.string)
      log.errors = []

      model.string = "abc"

      let error = try #require(log.errors.first)
      #expect(log.errors.count == 1)
      guard case .conversionFailed(let value, let from, let to) = error.cause else {
        Issue.record("expected conversionFailed, got \(error.cause)")
        return
      }
      #expect(value.contains("abc"))
      #expect(from == "String")
      #expect(to == "Int")
      #expect(error.member.hasPrefix("Plain."))
      #expect(error.description.contains("abc"))
      #expect(plain.intWrites == 0)
      #expect(other.string == "abc")
    }

    @Test func backConversionFailureCarriesValueAndTypes() throws {
      let model = Model(int: 2)
      let field = TextField()
      let log = ErrorLog()
      Bind.inout(model, \.int).onError(log.handler).inout(field, \.text, on: .editingChanged)

      field.userTypes("12a")

      let error = try #require(log.errors.first)
      #expect(log.errors.count == 1)
      guard case .backConversionFailed(let value, let from, let to) = error.cause else {
        Issue.record("expected backConversionFailed, got \(error.cause)")
        return
      }
      #expect(value.contains("12a"))
      #expect(from == "String")
      #expect(to == "Int")
      #expect(error.member.hasPrefix("TextField."))
      #expect(model.int == 2)
      #expect(field.text == "12a")
    }

    // The default reporter writes an error as one line: what the user typed keeps its line
    // breaks in `cause`, and the description escapes them.
    @Test func anErrorDescribesItselfOnOneLine() throws {
      let model = Model(int: 2)
      let field = TextField()
      let log = ErrorLog()
      let chain = Bind.inout(model, \.int).onError(log.handler)
        .inout(field, \.text, on: .editingChanged)
      field.userTypes("1\n2")
      let error = try #require(log.errors.first)
      #expect(error.cause == .backConversionFailed(value: "\"1\n2\"", from: "String", to: "Int"))
      #expect(
        error.description
          == "ChainBind: chain \(chain.code), member \(error.member): cannot convert \"1\\n2\""
          + " (String) to Int; the change was dropped and the member keeps its value")
      chain.unbind()
    }
  }

  // The tests that replace the process-wide fallback handler run one at a time, here.
  @Suite(.serialized) struct Reporting {
    @Test func errorsOfChainsWithoutHandlerGoToTheFallbackHandler() {
      let previous = Bind.fallbackErrorHandler
      defer { Bind.fallbackErrorHandler = previous }
      let collector = ErrorCollector()
      Bind.fallbackErrorHandler = { collector.append($0) }

      let unhandledHead = Model()
      let handledHead = Model()
      let unhandled = Bind.inout(unhandledHead, \.int)
      unhandled.in(Plain(), \.int)
      let log = ErrorLog()
      let handled = Bind.inout(handledHead, \.int).onError(log.handler)
      handled.in(Plain(), \.int)

      let fallbackErrors = collector.errors(of: unhandled.code)
      #expect(fallbackErrors.map(\.cause) == [.notObservable])
      #expect(fallbackErrors.first?.member.hasPrefix("Plain.") == true)
      #expect(collector.errors(of: handled.code).isEmpty)
      #expect(log.errors.map(\.cause) == [.notObservable])
    }

    /// A start that another thread's start of the same property overtakes joins its chain, and
    /// reports `.notObservable` once, there: it used to report it first for the chain it made
    /// and released unused.
    @Test func aStartOvertakenByAnotherReportsOnceOnTheChainItJoins() {
      let previous = Bind.fallbackErrorHandler
      defer { Bind.fallbackErrorHandler = previous }
      let collector = ErrorCollector()
      Bind.fallbackErrorHandler = { collector.append($0) }
      let plain = HeldPlain()
      let joined = LockedBox<ChainCode?>(nil)
      plain.hold.arm()
      let done = startThread { joined.withLock { $0 = Bind.inout(plain, \.value).code } }
      guard plain.hold.waitReached() else { return }
      let first = Bind.inout(plain, \.value)  // between the held start's look-up and attach
      plain.hold.resume()
      guard done.wait(timeout: .now() + 60) == .success else {
        Issue.record("the held start did not return")
        return
      }
      #expect(joined.withLock { $0 } == first.code)
      let reported = collector.errors(ofMember: "HeldPlain.")
      #expect(reported.map(\.cause) == [.notObservable, .notObservable])
      #expect(reported.allSatisfy { $0.chain == first.code })
    }

    @Test func replacingTheFallbackHandlerReleasesTheOldOneOutsideItsLock() {
      let original = Bind.fallbackErrorHandler
      do {
        let watcher = ReleaseWatcher()
        Bind.fallbackErrorHandler = { [watcher] error in
          withExtendedLifetime(watcher) {}
          original(error)
        }
      }
      // Traps ("Recursive call to lock Mutex") if the replaced handler dies under the lock.
      Bind.fallbackErrorHandler = original
    }

    @Test func bindingErrorIsASendableError() async throws {
      let model = Model()
      let log = ErrorLog()
      let chain = Bind.inout(model, \.int).onError(log.handler).inout(Plain(), \.int)
      let error = try #require(log.errors.first)

      let crossed = await Task.detached { sendableError(error) }.value
      #expect(crossed.chain == chain.code)
      #expect(crossed.cause == .notObservable)
      let thrown = #expect(throws: BindingError.self) { throw crossed }
      #expect(thrown?.description == error.description)
      let existential: any Error = error
      #expect((existential as? BindingError)?.chain == chain.code)
    }
  }
}

/// Reads the fallback handler when it dies, as a logger's deinit might.
private final class ReleaseWatcher: Sendable {
  deinit { _ = Bind.fallbackErrorHandler }
}

extension ErrorTests {
  /// How a non-observable property is bound to send.
  enum SendingRole: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case `inout`, `in`

    var testDescription: String { rawValue }
  }
}
