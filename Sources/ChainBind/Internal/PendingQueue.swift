// Names an entry of a `PendingQueue`: a sending member's change, which the member's next change
// replaces, or work for a member or sink (its first value, a tracked member's first read), taken
// out when it leaves, or a tracked member's re-read, which a newer change moves last. Each kind is
// named apart: a member's change must not replace its first value.
@usableFromInline
struct PendingKey: Hashable {
  private enum Kind: UInt8 { case change, firstValue, firstRead, reread }
  private let object: ObjectIdentifier
  private let kind: Kind

  static func change(of member: Member) -> PendingKey {
    PendingKey(object: ObjectIdentifier(member), kind: .change)
  }

  // A new member's or sink's initial sync.
  static func firstValue(of memberOrSink: AnyObject) -> PendingKey {
    PendingKey(object: ObjectIdentifier(memberOrSink), kind: .firstValue)
  }

  // A new tracked member's first read (`ChainCore.startTracking`).
  static func firstRead(of member: Member) -> PendingKey {
    PendingKey(object: ObjectIdentifier(member), kind: .firstRead)
  }

  // A tracked member's re-read (`TrackedSource.queuedReread`).
  static func reread(of member: Member) -> PendingKey {
    PendingKey(object: ObjectIdentifier(member), kind: .reread)
  }

  // Work that a newer one of its key moves last instead of being queued again.
  var mergesWaiting: Bool { kind == .reread }
}

// What waits for a chain's delivery, or for its actor: first in, first out, appended and taken in
// O(1) (amortized). An entry appended with the key of one still waiting replaces it, and goes
// last, as its change came last: what waits is bounded by the members that send, not by how many
// changes they make, and work for an object that left is taken out (Docs/Semantics.md, "Fair
// delivery").
@usableFromInline
struct PendingQueue<Element> {
  // Entries made by work the delivery runs now: taken before the rest, in order, never replaced.
  private var front: ContiguousArray<Element> = []
  private var frontHead = 0
  // nil: an entry replaced by a newer one of its key, or taken.
  private var slots: ContiguousArray<(key: PendingKey?, element: Element)?> = []
  private var head = 0
  // Where each keyed entry waits, in `slots`.
  private var places: [PendingKey: Int] = [:]
  private var slotCount = 0

  var count: Int { front.count - frontHead + slotCount }
  var isEmpty: Bool { count == 0 }

  // Appends `element`. Returns the entry of the same key it replaced, which the caller releases
  // after unlocking (its value may be an object whose deinit uses the chain).
  mutating func append(_ element: Element, key: PendingKey? = nil) -> Element? {
    var replaced: Element?
    if let key, let place = places[key], let old = slots[place] {
      replaced = old.element
      slots[place] = nil
      slotCount -= 1
      skipTaken()
    }
    if let key { places[key] = slots.count }
    slots.append((key, element))
    slotCount += 1
    if slots.count - head > 2 * slotCount + 16 { compact() }
    return replaced
  }

  // Takes out the entry appended with `key`, if it still waits; the caller releases it after
  // unlocking.
  mutating func remove(key: PendingKey) -> Element? {
    guard let place = places.removeValue(forKey: key), let entry = slots[place] else { return nil }
    slots[place] = nil
    slotCount -= 1
    skipTaken()
    return entry.element
  }

  // Whether an entry appended with `key` still waits.
  func contains(key: PendingKey) -> Bool {
    guard let place = places[key] else { return false }
    return slots[place] != nil
  }

  // Moves the entry waiting with `key` last, as if appended now: a re-read that a newer change
  // merges into (it reads the latest) goes after the changes accepted before that one. False
  // when none waits.
  mutating func moveToBack(key: PendingKey) -> Bool {
    guard let element = remove(key: key) else { return false }
    _ = append(element, key: key)
    return true
  }

  // Puts `element` before everything appended, after what was put there before it, except the
  // last `later` entries put there (what a work's user code changed goes after its result).
  mutating func appendToFront(_ element: Element, beforeLast later: Int = 0) {
    precondition(later <= front.count - frontHead, "Internal inconsistency: a work's entries")
    front.insert(element, at: front.count - later)
  }

  var first: Element? {
    if frontHead < front.count { return front[frontHead] }
    return head < slots.count ? slots[head]?.element : nil
  }

  mutating func popFirst() -> Element? {
    if frontHead < front.count {
      let element = front[frontHead]
      frontHead += 1
      if frontHead == front.count {
        front.removeAll(keepingCapacity: true)
        frontHead = 0
      }
      return element
    }
    guard head < slots.count, let entry = slots[head] else { return nil }
    slots[head] = nil
    head += 1
    slotCount -= 1
    if let key = entry.key { places[key] = nil }
    skipTaken()
    if head >= 32 && head * 2 >= slots.count { compact() }
    return entry.element
  }

  // Takes out the entries `removes` picks, and keeps the others, keys and order; returns what it
  // took, for the caller to release after unlocking.
  mutating func removeAll(where removes: (Element) -> Bool) -> ContiguousArray<Element> {
    var removed: ContiguousArray<Element> = []
    var kept = PendingQueue()
    for element in front[frontHead...] {
      if removes(element) { removed.append(element) } else { kept.appendToFront(element) }
    }
    for case let entry? in slots[head...] {
      if removes(entry.element) {
        removed.append(entry.element)
      } else {
        _ = kept.append(entry.element, key: entry.key)
      }
    }
    self = kept
    return removed
  }

  // Empties the queue; returns what it held, in order, for the caller to release after unlocking.
  mutating func removeAll() -> ContiguousArray<Element> {
    var all = ContiguousArray(front[frontHead...])
    for case let entry? in slots[head...] { all.append(entry.element) }
    self = PendingQueue()
    return all
  }

  // Keeps `slots[head]` an entry while there is one, so `first` needs no search.
  private mutating func skipTaken() {
    while head < slots.count && slots[head] == nil { head += 1 }
    if head == slots.count {
      slots.removeAll(keepingCapacity: true)
      head = 0
    }
  }

  // Drops the taken and replaced slots: O(entries), after at least as many appends or takes.
  private mutating func compact() {
    var kept = ContiguousArray<(key: PendingKey?, element: Element)?>()
    kept.reserveCapacity(slotCount)
    places.removeAll(keepingCapacity: true)
    for case let entry? in slots[head...] {
      if let key = entry.key { places[key] = kept.count }
      kept.append(entry)
    }
    slots = kept
    head = 0
  }
}
