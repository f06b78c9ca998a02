@_spi(Testing) import ChainBind
import Foundation
import Testing

// Shared test objects. Each counts its writes, so tests can prove that something did not happen.

/// A model whose properties are all `@Bound` (observable sources).
final class Model {
  @Bound var int = 0 { didSet { intSets += 1 } }
  @Bound var double = 0.0 { didSet { doubleSets += 1 } }
  @Bound var float: Float = 0
  @Bound var bool = false { didSet { boolSets += 1 } }
  @Bound var string = "" { didSet { stringSets += 1 } }
  @Bound var optionalString: String? = nil
  @Bound var optionalInt: Int? = nil
  var intSets = 0
  var doubleSets = 0
  var boolSets = 0
  var stringSets = 0

  init() {}

  init(int: Int = 0, string: String = "", bool: Bool = false, double: Double = 0) {
    self.int = int
    self.string = string
    self.bool = bool
    self.double = double
    intSets = 0
    stringSets = 0
    boolSets = 0
    doubleSets = 0
  }
}

/// A plain object: its properties receive but cannot send (not observable).
final class Plain {
  var int = 0 { didSet { intWrites += 1 } }
  var double = 0.0 { didSet { doubleWrites += 1 } }
  var float: Float = 0
  var bool = false { didSet { boolWrites += 1 } }
  var string = "" { didSet { stringWrites += 1 } }
  var optionalString: String? = nil { didSet { optionalStringWrites += 1 } }
  var optionalInt: Int? = nil
  let readOnlyInt = 7
  var intWrites = 0
  var doubleWrites = 0
  var boolWrites = 0
  var stringWrites = 0
  var optionalStringWrites = 0
}

/// A text field: a control whose user types; sends `.editingChanged` like UIKit.
final class TextField: ControlEventSource {
  enum Event { case editingChanged, editingDidEnd }
  let controlEvents = ControlEvents<Event>()
  var text = "" { didSet { textWrites += 1 } }
  var placeholder = ""
  var textWrites = 0

  /// Simulates the user replacing the text.
  func userTypes(_ newText: String) {
    text = newText
    controlEvents.send(.editingChanged)
  }
}

/// A slider: a control with a numeric value; sends `.valueChanged`.
final class Slider: ControlEventSource {
  enum Event { case valueChanged }
  let controlEvents = ControlEvents<Event>()
  var value = 0.0 { didSet { valueWrites += 1 } }
  var valueWrites = 0

  func userSlides(to newValue: Double) {
    value = newValue
    controlEvents.send(.valueChanged)
  }
}

/// A switch: a Boolean control; sends `.valueChanged`.
final class Switch: ControlEventSource {
  enum Event { case valueChanged }
  let controlEvents = ControlEvents<Event>()
  var isOn = false { didSet { isOnWrites += 1 } }
  var isOnWrites = 0

  func userToggles(to newValue: Bool) {
    isOn = newValue
    controlEvents.send(.valueChanged)
  }
}

/// Collects the errors a chain reports.
final class ErrorLog {
  var errors: [BindingError] = []
  var handler: (BindingError) -> Void { { self.errors.append($0) } }
}

/// Runs `body` with a registry of its own.
///
/// `Bind.activeChainCount` then counts only the chains `body` makes, even while other tests run
/// in parallel. Objects bound inside must not be bound again outside.
func withIsolatedRegistry<Result>(_ body: () throws -> Result) rethrows -> Result {
  try ScopedRegistry().withScope { try body() }
}

// SplitMix64 (Vigna): a tiny generator whose output depends only on the seed, on every platform
// and Swift version (the standard library's `random(in:using:)` algorithms may change, so draws
// use `below(_:)`).
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

  mutating func pick<Element>(_ elements: [Element]) -> Element {
    elements[below(elements.count)]
  }
}

/// A value behind an `NSLock`: ThreadSanitizer sees its pthread mutex, where it does not see
/// the futex `Mutex` parks threads with on Linux.
final class LockedBox<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// A closure a test puts in user code (a getter, a setter), installed and called from any thread.
///
/// Not a `LockedBox` of the closure: `withLock` passes its state `inout` through a generic
/// parameter, which wraps a closure in two more thunks on every call (Docs/Architecture.md,
/// "Locks"). Here the closure is read and called inside code generic over the same `Argument`.
final class Hook<Argument>: @unchecked Sendable {
  private let lock = NSLock()
  private var body: (@Sendable (Argument) -> Void)?

  /// Installs `body`, or removes the hook (nil).
  func set(_ body: (@Sendable (Argument) -> Void)?) {
    lock.lock()
    let replaced = self.body
    self.body = body
    lock.unlock()
    withExtendedLifetime(replaced) {}
  }

  /// Calls the installed closure, if any, after unlocking.
  func callAsFunction(_ argument: Argument) {
    lock.lock()
    let body = self.body
    lock.unlock()
    body?(argument)
  }
}

/// Holds the thread that calls `hook` with `value` until `proceed` is signalled; `entered` is
/// signalled once it is held.
func hold(
  _ hook: Hook<Int>, at value: Int
) -> (entered: DispatchSemaphore, proceed: DispatchSemaphore) {
  let entered = DispatchSemaphore(value: 0)
  let proceed = DispatchSemaphore(value: 0)
  hook.set { called in
    guard called == value else { return }
    entered.signal()
    proceed.wait()
  }
  return (entered, proceed)
}

/// Starts `body` on a new thread; the returned semaphore is signalled when it has finished.
func startThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
  let done = DispatchSemaphore(value: 0)
  Thread {
    body()
    done.signal()
  }.start()
  return done
}

/// Waits until `chain` delivers nothing and nothing waits for its delivery.
///
/// Then what a call left to a relay has been delivered (Docs/Semantics.md, "Fair delivery").
/// Polls the chain's state, never sleeps as synchronisation; false when it is not idle within
/// `timeout` seconds.
func waitUntilIdle<Value>(_ chain: Chain<Value>, timeout: Double = 30) -> Bool {
  let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
  while !chain.isIdle {
    if DispatchTime.now().uptimeNanoseconds > deadline { return false }
    sched_yield()
  }
  return true
}

/// The same, for a chain whose deliveries may wait for the caller's actor: yields to it.
func waitUntilIdle<Value>(
  _ chain: Chain<Value>, timeout: Double = 30, isolation: isolated (any Actor)? = #isolation
) async -> Bool {
  let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
  while !chain.isIdle {
    if DispatchTime.now().uptimeNanoseconds > deadline { return false }
    await Task.yield()
  }
  return true
}

/// Holds the first thread that asks, once armed, until resumed.
final class HeldOnce: Sendable {
  private let isArmed = LockedBox(false)
  private let reached = DispatchSemaphore(value: 0)
  private let proceed = DispatchSemaphore(value: 0)

  func arm() { isArmed.withLock { $0 = true } }

  /// Whether this thread was held (and has been resumed).
  func holds() -> Bool {
    let holds = isArmed.withLock { armed in
      defer { armed = false }
      return armed
    }
    if holds {
      reached.signal()
      proceed.wait()
    }
    return holds
  }

  /// Waits, with a generous guard, for a thread to be held; records an issue if none is.
  func waitReached() -> Bool {
    let reached = reached.wait(timeout: .now() + 30) == .success
    if !reached { Issue.record("no thread was held") }
    return reached
  }

  func resume() { proceed.signal() }
}
