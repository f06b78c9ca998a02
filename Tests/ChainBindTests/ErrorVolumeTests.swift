@_spi(Testing) import ChainBind
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Docs/Semantics.md, "Errors": the closures ChainBind keeps process-wide (the fallback error
// handler, a test's scheduler) cost the same at their 300 000th use as at their first. Issue #28:
// each read of the fallback handler wrapped it in two more reabstraction thunks, so each report
// ran deeper and slower than the one before, and about 200 000 of them overflowed the stack.
//
// No timing: each test counts how many frames deep the kept closure runs, every 256th use.
// Rewrapped, it ran two frames deeper at every use, so a test stops and fails at its 256th use
// rather than crash or run for minutes. Frames, not stack addresses: AddressSanitizer moves
// locals to a stack of its own.

/// Uses of a kept closure per test.
private let uses = 300_000

/// How many frames the deepest and the shallowest of a closure's sampled calls may be apart: the
/// calls come by the same path every time.
private let frameLimit = 8

/// Texts that no `Int` is: each one a `.backConversionFailed` report.
private let rejectedTexts = ["a", "12a", "4.2", "", " x ", "1e3", "--1", "٣"]

/// `backtrace(3)`, looked up by name (Swift's Glibc module leaves it out), as an address.
private let backtraceAddress: UInt = {
  #if canImport(Darwin)
    let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
  #else
    let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
  #endif
  return UInt(bitPattern: dlsym(everywhere, "backtrace"))
}()

/// How many frames deep the calling thread is.
private func stackFrames() -> Int {
  typealias Backtrace =
    @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32) -> Int32
  guard let function = UnsafeRawPointer(bitPattern: backtraceAddress) else { return 0 }
  var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 8_192)
  return Int(unsafeBitCast(function, to: Backtrace.self)(&frames, Int32(frames.count)))
}

/// The calls of a closure ChainBind keeps: how many, and how many frames deep the sampled ones
/// ran.
private final class Depths: @unchecked Sendable {
  private let lock = NSLock()
  private let samplesEveryCall: Bool
  private var calls = 0
  private var isSampling = true
  private var fewest = Int.max
  private var most = 0

  /// - Parameter samplesEveryCall: Whether every call is sampled; if not, the first and each
  ///   one after `sampleNextCall()`.
  init(samplesEveryCall: Bool = false) { self.samplesEveryCall = samplesEveryCall }

  func sampleNextCall() { lock.withLock { isSampling = true } }

  /// Records a call.
  func record() {
    let isSampled = lock.withLock {
      calls += 1
      defer { isSampling = samplesEveryCall }
      return isSampling
    }
    guard isSampled else { return }
    let frames = stackFrames()
    lock.withLock {
      fewest = min(fewest, frames)
      most = max(most, frames)
    }
  }

  var count: Int { lock.withLock { calls } }

  /// How many frames apart the deepest and the shallowest sampled calls were.
  var spread: Int { lock.withLock { most < fewest ? 0 : most - fewest } }
}

/// Runs `use` `count` times, sampling the depth of `depths`' calls every 256th use; stops,
/// failing, once they run deeper than at first.
private func repeatUses(
  _ count: Int, _ depths: Depths, sourceLocation: SourceLocation = #_sourceLocation,
  _ use: (Int) -> Void
) {
  for index in 0..<count {
    let isSampled = index % 256 == 0
    if isSampled { depths.sampleNextCall() }
    use(index)
    if isSampled && depths.spread > frameLimit {
      Issue.record(
        "at use \(index + 1) the kept closure ran \(depths.spread) frames deeper than at first",
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

/// A released chain: each addition to it is a `.chainInactive` report, the cheapest there is (a
/// typed one also reads the field, converts, and names the text it failed on).
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
    let typed = Depths(samplesEveryCall: true)
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
    #expect(added.spread <= frameLimit)
    // The typed report after all the others ran as deep as the one before them.
    #expect(typed.count == 2)
    #expect(typed.spread <= frameLimit)
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
    let typed = Depths(samplesEveryCall: true)
    let added = Depths()
    let (typedCode, addedCode) = (chain.code, released.code)
    let previous = Bind.fallbackErrorHandler
    defer { Bind.fallbackErrorHandler = previous }
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
    // Reading the handler is a use too: 300 000 reads, with a report every 256th to sample.
    repeatUses(uses, added) { index in
      if index % 256 == 0 {
        released.onReject { _ in }
      } else {
        _ = Bind.fallbackErrorHandler
      }
    }
    #expect(added.count == uses + (uses + 255) / 256)
    field.userTypes("12a")
    #expect(typed.count == 2)
    #expect(typed.spread <= frameLimit)
    #expect(added.spread <= frameLimit)
    // Replaced and released after all those uses: it released nested thunks recursively, and
    // crashed, when reads wrapped it.
    let replacement = Depths()
    Bind.fallbackErrorHandler = { error in
      if error.chain == typedCode { replacement.record() } else { previous(error) }
    }
    field.userTypes("12a")
    #expect(replacement.count == 1)
    #expect(typed.count == 2)
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
    #expect(depths.spread <= frameLimit)
    #expect(target.int == model.int)
    chain.unbind()
  }
}
