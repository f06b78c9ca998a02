@_spi(Testing) import ChainBind
import Foundation
import Testing

// Docs/Semantics.md, "Errors": the closures ChainBind keeps process-wide (the fallback error
// handler, a test's scheduler) cost the same at their 300 000th use as at their first. Issue #28:
// each read of the fallback handler wrapped it in two more reabstraction thunks, so each report
// ran deeper and slower than the one before, and about 200 000 of them overflowed the stack.
//
// No timing: each test records the stack depth at which the kept closure runs. Rewrapped, it ran
// a few dozen bytes deeper at every use, so a test stops and fails once the depth has moved by
// more than `depthLimit`, a few hundred uses in, rather than crash or run for minutes.

/// Uses of a kept closure per test.
private let uses = 300_000

/// How far apart, in bytes, the deepest and the shallowest of a closure's calls may be: the calls
/// come by the same path every time, and their depth moves by a frame or two at most.
private let depthLimit: UInt = 16 * 1024

/// Texts that no `Int` is: each one a `.backConversionFailed` report.
private let rejectedTexts = ["a", "12a", "4.2", "", " x ", "1e3", "--1", "٣"]

/// The address of a local of this frame: how deep the stack is (it grows down).
@inline(never)
private func stackAddress() -> UInt {
  var marker = 0
  return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
}

/// The calls of a closure ChainBind keeps: how many, and how deep in the stack they ran.
private final class Depths: @unchecked Sendable {
  private let lock = NSLock()
  private var calls = 0
  private var deepest = UInt.max
  private var shallowest = UInt.min

  /// Records a call, at the depth of its caller.
  @inline(never)
  func record() {
    let address = stackAddress()
    lock.withLock {
      calls += 1
      deepest = min(deepest, address)
      shallowest = max(shallowest, address)
    }
  }

  var count: Int { lock.withLock { calls } }

  /// How far apart the deepest and the shallowest calls were, in bytes.
  var spread: UInt { lock.withLock { calls == 0 ? 0 : shallowest - deepest } }
}

/// Runs `use` `count` times; stops, failing, once the calls `depths` records drift deeper.
private func repeatUses(
  _ count: Int, _ depths: Depths, sourceLocation: SourceLocation = #_sourceLocation,
  _ use: (Int) -> Void
) {
  for index in 0..<count {
    use(index)
    if index % 256 == 255 && depths.spread > depthLimit {
      Issue.record(
        "after \(index + 1) uses the kept closure ran \(depths.spread) bytes deeper than at first",
        sourceLocation: sourceLocation)
      return
    }
  }
}

/// A model's `Int` bound two-way to a text field, as in a form: typing letters into the field is
/// a `.backConversionFailed` report.
private func numberField() -> (Model, TextField, Chain<Int>) {
  let model = Model(int: 5)
  let field = TextField()
  let chain = Bind.inout(model, \.int).inout(field, \.text, on: .editingChanged)
  return (model, field, chain)
}

/// A released chain: each addition to it is a `.chainInactive` report, the cheapest there is
/// (a typed one costs about 20 µs in a debug build, 300 000 of them 6 s).
private func releasedChain() -> Chain<Int> {
  let chain = Bind.inout(Model(), \.int)
  chain.unbind()
  return chain
}

/// Which `Depths` a kept closure's calls go to: set by the test between its phases (the calls
/// come on the test's thread, inside its statements).
private final class Phase: @unchecked Sendable {
  var depths: Depths
  init(_ depths: Depths) { self.depths = depths }
}

extension ErrorTests.Reporting {
  @Test func defaultFallbackHandlerCostsTheSameAtItsLastReport() {
    let (model, field, chain) = numberField()
    let released = releasedChain()
    let typed = Depths()
    let added = Depths()
    let phase = Phase(typed)
    let lines = LockedBox<[String]>([])
    Bind.withStandardErrorCaptured({ line in
      phase.depths.record()
      if phase.depths === typed { lines.withLock { $0.append(line) } }
    }) {
      field.userTypes("12a")
      phase.depths = added
      repeatUses(uses, added) { _ in released.onReject { _ in } }
      phase.depths = typed
      field.userTypes("12a")
    }
    #expect(added.count == uses)
    #expect(added.spread <= depthLimit)
    // The typed report after all the others ran as deep as the one before them.
    #expect(typed.count == 2)
    #expect(typed.spread <= depthLimit)
    // The field's `text` has observers: its name is the key path's printed form.
    let expected = (
      prefix: "ChainBind: chain \(chain.code), member TextField.",
      suffix: ": cannot convert \"12a\" (String) to Int; the change was dropped and the member"
        + " keeps its value"
    )
    let written = lines.withLock { $0 }
    #expect(written.count == 2)
    #expect(written.allSatisfy { $0.hasPrefix(expected.prefix) && $0.hasSuffix(expected.suffix) })
    #expect(model.int == 5)
    chain.unbind()
  }

  @Test func usersFallbackHandlerCostsTheSameAtItsLastReportAndIsReplacedSafely() {
    let (model, field, chain) = numberField()
    let released = releasedChain()
    let typed = Depths()
    let added = Depths()
    let (typedCode, addedCode) = (chain.code, released.code)
    let previous = Bind.fallbackErrorHandler
    // Other tests' errors are passed on.
    Bind.fallbackErrorHandler = { error in
      switch error.chain {
      case typedCode: typed.record()
      case addedCode: added.record()
      default: previous(error)
      }
    }
    field.userTypes("12a")
    repeatUses(uses, added) { _ in released.onReject { _ in } }
    #expect(added.count == uses)
    // Reading the handler is a use too.
    repeatUses(uses, added) { _ in _ = Bind.fallbackErrorHandler }
    field.userTypes("12a")
    #expect(typed.count == 2)
    #expect(typed.spread <= depthLimit)
    #expect(added.spread <= depthLimit)
    // Replaced and released after all those uses: it released nested thunks recursively, and
    // crashed, when reads wrapped it.
    let replacement = Depths()
    Bind.fallbackErrorHandler = { error in
      if error.chain == typedCode { replacement.record() } else { previous(error) }
    }
    field.userTypes("12a")
    #expect(replacement.count == 1)
    #expect(typed.count == 2)
    Bind.fallbackErrorHandler = previous
    #expect(model.int == 5)
    chain.unbind()
  }
}

extension InterleavingTests {
  @Test("a test's scheduler costs the same at its 300 000th schedule point")
  func schedulerCostsTheSameAtItsLastPoint() {
    let model = Model()
    let target = Plain()
    let chain = Bind.inout(model, \.int).out(target, \.int)
    let depths = Depths()
    let thread = currentThreadNumber()
    // Other tests' changes reach the scheduler too while it is installed: they are not counted.
    Bind.withSchedulePoints({
      if currentThreadNumber() == thread { depths.record() }
    }) {
      var sets = 0
      repeatUses(uses, depths) { _ in
        guard depths.count < uses else { return }
        sets += 1
        model.int = sets
      }
    }
    // A set reaches one point or more.
    #expect(depths.count >= uses)
    #expect(depths.spread <= depthLimit)
    #expect(target.int == model.int)
    chain.unbind()
  }
}
