// Every membership, found by its object's identity: a hash table of members, one slot each,
// open addressing with linear probing. An object's memberships are the members in the run of
// slots from its home slot to the next empty one that have its identifier. One word per slot,
// where a dictionary of per-object lists took two per object and a link in each member
// (Docs/Performance.md, "Memory").
//
// Guarded by its registry shard's lock. Removing a member releases the table's reference only:
// the registry hands removed members to its garbage, released after unlocking.
struct MembershipTable {
  private var slots: ContiguousArray<Member?> = []
  private(set) var count = 0
  // Where the sweep (`sweep(_:_:)`) goes on.
  private var sweepCursor = 0

  // Addresses are spread by Fibonacci hashing: no seed, nothing to hash but a word.
  private func home(of id: ObjectIdentifier) -> Int {
    let shift = UInt.bitWidth - slots.count.trailingZeroBitCount
    return Int(truncatingIfNeeded: (UInt(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  // Calls `body` with each member of the object `id`, or of a dead object that had its address.
  // `body` must not change the table.
  func forEach(of id: ObjectIdentifier, _ body: (Member) -> Void) {
    guard !slots.isEmpty else { return }
    let mask = slots.count - 1
    var index = home(of: id)
    while let member = slots[index] {
      if member.objectID == id { body(member) }
      index = (index + 1) & mask
    }
  }

  // The first member of `id` that `matches`, if any.
  func first(of id: ObjectIdentifier, where matches: (Member) -> Bool) -> Member? {
    guard !slots.isEmpty else { return nil }
    let mask = slots.count - 1
    var index = home(of: id)
    while let member = slots[index] {
      if member.objectID == id && matches(member) { return member }
      index = (index + 1) & mask
    }
    return nil
  }

  // Slots, full or not.
  var capacity: Int { slots.count }

  // Calls `body` with the members in the next `count` slots, round the table: every member is
  // visited once per `capacity / count` calls. `body` must not change the table.
  mutating func sweep(_ count: Int, _ body: (Member) -> Void) {
    guard !slots.isEmpty else { return }
    let mask = slots.count - 1
    var cursor = sweepCursor
    slots.withUnsafeBufferPointer { slots in
      for _ in 0..<Swift.min(count, slots.count) {
        cursor = (cursor + 1) & mask
        if let member = slots[cursor] { body(member) }
      }
    }
    sweepCursor = cursor
  }

  mutating func insert(_ member: Member) {
    // At most three quarters full: runs stay short.
    if (count + 1) * 4 > slots.count * 3 { resize(to: Swift.max(8, slots.count * 2)) }
    let mask = slots.count - 1
    var index = home(of: member.objectID)
    while slots[index] != nil { index = (index + 1) & mask }
    slots[index] = member
    count += 1
  }

  // Removes `member`, if the table holds it.
  mutating func remove(_ member: Member) {
    guard !slots.isEmpty else { return }
    let mask = slots.count - 1
    var hole = home(of: member.objectID)
    while true {
      guard let occupant = slots[hole] else { return }
      if occupant === member { break }
      hole = (hole + 1) & mask
    }
    // Backward shift: a member after the hole whose home is not between the hole and its slot
    // moves into the hole, so that every run stays unbroken without tombstones.
    var next = (hole + 1) & mask
    while let moving = slots[next] {
      let home = home(of: moving.objectID)
      let distanceToHome = (next - home) & mask
      let distanceToHole = (next - hole) & mask
      if distanceToHome >= distanceToHole {
        slots[hole] = moving
        hole = next
      }
      next = (next + 1) & mask
    }
    slots[hole] = nil
    count -= 1
    // An eighth full at most: half the slots go, so that a burst of bindings does not keep its
    // table (and a table just grown is a quarter full at least: no thrashing).
    if slots.count > 64 && count * 8 < slots.count { resize(to: slots.count / 2) }
  }

  // Removes every member of the object `id`, or of a dead object that had its address, and
  // returns them: one pass over their run and what follows it, where removing them one at a time
  // would shift the rest of the run each time (O(k²) for an object of k memberships).
  mutating func removeAll(of id: ObjectIdentifier) -> [Member] {
    guard first(of: id, where: { _ in true }) != nil else { return [] }
    let mask = slots.count - 1
    var removed: [Member] = []
    var others: [Member] = []
    var index = home(of: id)
    // The rest of the cluster is emptied and the others put back from their homes: each lands
    // in the first empty slot after its home, as when it was first inserted.
    while let member = slots[index] {
      if member.objectID == id { removed.append(member) } else { others.append(member) }
      slots[index] = nil
      index = (index + 1) & mask
    }
    count -= removed.count + others.count
    for member in others { insert(member) }
    while slots.count > 64 && count * 8 < slots.count { resize(to: slots.count / 2) }
    return removed
  }

  private mutating func resize(to capacity: Int) {
    let old = slots
    slots = ContiguousArray(repeating: nil, count: capacity)
    count = 0
    for case let member? in old { insert(member) }
  }
}
