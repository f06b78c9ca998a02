@_spi(Testing) import ChainBind
import Dispatch
import Foundation
import Testing

// A `@Bound` set uses its member without retaining it: the member is pinned for the set
// (BoundToken.swift, `pin`). A membership that ends during the set (unbound by the set's own
// conversion or by another thread, or its token released with the property's storage) keeps
// the member until the set ends, and no longer. Under AddressSanitizer (.ci/run), a member freed
// too early is a use after free. The member's conversion closure holds a canary: while the
// member lives, so does the canary.

private final class Canary: Sendable {}

/// A source whose storage can be replaced: its token is released, which ends its membership.
private final class Resettable: @unchecked Sendable {
  @Bound var value = 0
  func replaceStorage() { _value = Bound(wrappedValue: value) }
}

/// Binds `source` into `receiver` through a conversion that holds a canary.
///
/// The conversion runs `during` for each change it sends. Returns the canary, weakly: alive
/// while the member is.
private func bindHoldingCanary(
  _ receiver: Receiver, _ source: Resettable, during: @escaping () -> Void
) -> () -> Canary? {
  let bird = Canary()
  Bind.inout(receiver, \.value).in(
    source, \.value,
    back: { value in
      withExtendedLifetime(bird) {}
      during()
      return value
    })
  return { [weak bird] in bird }
}

private final class Receiver: @unchecked Sendable {
  @Bound var value = 0
}

@Suite("A member whose membership ends during its own set")
struct PinnedMemberTests {
  @Test("unbound by the set's conversion: kept until the set ends, then released")
  func unboundByItsConversion() {
    let receiver = Receiver()
    let source = Resettable()
    let canary = bindHoldingCanary(receiver, source) { [unowned source] in Bind.unbind(source) }

    source.value = 5

    // Made while it was a member: delivered all the same (Docs/Semantics.md, "Propagation").
    #expect(receiver.value == 5)
    #expect(canary() == nil)
    source.value = 6
    #expect(receiver.value == 5)
  }

  @Test("unbound by another thread while the set is held in its conversion: kept until it ends")
  func unboundByAnotherThread() {
    let receiver = Receiver()
    let source = Resettable()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let canary = bindHoldingCanary(receiver, source) {
      entered.signal()
      proceed.wait()
    }

    let done = startThread { source.value = 5 }
    entered.wait()  // the set is in its conversion, its member pinned
    Bind.unbind(source)
    #expect(canary() != nil)
    proceed.signal()
    done.wait()

    #expect(receiver.value == 5)
    #expect(canary() == nil)
  }

  @Test("its token released with the storage during the set: kept until the set ends")
  func storageReplacedDuringSet() {
    let receiver = Receiver()
    let source = Resettable()
    let canary = bindHoldingCanary(receiver, source) { [unowned source] in
      source.replaceStorage()
    }

    source.value = 5

    #expect(receiver.value == 5)
    #expect(canary() == nil)
    source.value = 6  // the new storage is not bound
    #expect(receiver.value == 5)
  }
}
