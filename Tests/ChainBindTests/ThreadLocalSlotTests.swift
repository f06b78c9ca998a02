import Dispatch
import Testing

@testable import ChainBind

// `ThreadLocalPointer` (Platform.swift): each thread's slots are its own, and each slot is apart
// from the others. A tracked read's reader, an actor's drain and a member's initial sync each
// keep a slot; a slot shared by two threads would hand one thread's collector to the other's
// getters.

@Suite("Thread-local slots: each thread's own, each slot apart")
struct ThreadLocalSlotTests {
  private static let slots = ThreadLocalPointer.Slot.allCases.map { ThreadLocalPointer($0) }

  private static func address(_ bits: UInt) -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer(bitPattern: bits)
  }

  @Test("a thread sees what it set in each slot, and another thread's values never")
  func eachThreadHasItsOwnSlots() {
    for (index, slot) in Self.slots.enumerated() {
      slot.set(Self.address(UInt(0x1000 + index * 16)))
    }
    // The other thread sets its own values while this one holds them: each sees its own.
    let otherSetAll = DispatchSemaphore(value: 0)
    let checked = DispatchSemaphore(value: 0)
    let seenByOther = LockedBox<[UInt]>([])
    let done = startThread {
      let before = Self.slots.map { UInt(bitPattern: $0.value) }
      for (index, slot) in Self.slots.enumerated() {
        slot.set(Self.address(UInt(0x9000 + index * 16)))
      }
      otherSetAll.signal()
      checked.wait()
      seenByOther.withLock { $0 = before + Self.slots.map { UInt(bitPattern: $0.value) } }
      for slot in Self.slots { slot.set(nil) }
    }
    otherSetAll.wait()
    let mine = Self.slots.map { UInt(bitPattern: $0.value) }
    checked.signal()
    done.wait()
    let count = Self.slots.count
    let expectedMine: [UInt] = (0..<count).map { UInt(0x1000 + $0 * 16) }
    let expectedOther: [UInt] =
      Array(repeating: 0, count: count) + (0..<count).map { UInt(0x9000 + $0 * 16) }
    #expect(mine == expectedMine)
    // A new thread starts with every slot empty, and keeps what it set.
    let other = seenByOther.withLock { $0 }
    #expect(other == expectedOther)
    for slot in Self.slots { slot.set(nil) }
  }

  @Test(
    "setting one slot leaves the others as they were", arguments: ThreadLocalPointer.Slot.allCases)
  func slotsAreApart(_ changed: ThreadLocalPointer.Slot) {
    let seen = LockedBox<[UInt]>([])
    let done = startThread {
      for (index, slot) in Self.slots.enumerated() {
        slot.set(Self.address(UInt(0x2000 + index * 16)))
      }
      ThreadLocalPointer(changed).set(Self.address(0x7770))
      seen.withLock { $0 = Self.slots.map { UInt(bitPattern: $0.value) } }
      for slot in Self.slots { slot.set(nil) }
    }
    done.wait()
    let expected = ThreadLocalPointer.Slot.allCases.enumerated().map { index, slot in
      slot == changed ? UInt(0x7770) : UInt(0x2000 + index * 16)
    }
    #expect(seen.withLock { $0 } == expected)
  }
}
