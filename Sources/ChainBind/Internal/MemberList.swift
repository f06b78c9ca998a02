// A chain's members, in the order they were added: the first two in the chain itself, the rest
// in an array. Most chains have two members, and an array for them would take 48 bytes more per
// chain (Docs/Performance.md, "Memory").
//
// Always packed: `second` is set only when `first` is, and `rest` only when both are.
@usableFromInline
struct MemberList: RandomAccessCollection {
  @usableFromInline var first: Member?
  @usableFromInline var second: Member?
  @usableFromInline var rest: ContiguousArray<Member>?

  @usableFromInline init() {}

  @inlinable var startIndex: Int { 0 }

  @inlinable var endIndex: Int {
    guard first != nil else { return 0 }
    guard second != nil else { return 1 }
    return 2 + (rest?.count ?? 0)
  }

  @inlinable var isEmpty: Bool { first == nil }

  @inlinable
  subscript(index: Int) -> Member {
    get {
      switch index {
      case 0: first.unsafelyUnwrapped
      case 1: second.unsafelyUnwrapped
      default: rest.unsafelyUnwrapped[index - 2]
      }
    }
    set {
      switch index {
      case 0: first = newValue
      case 1: second = newValue
      default: rest?[index - 2] = newValue
      }
    }
  }

  mutating func append(_ member: Member) {
    if first == nil {
      first = member
    } else if second == nil {
      second = member
    } else {
      var more = rest ?? []
      rest = nil  // moved out and back: appended in place, not copied
      more.append(member)
      rest = more
    }
  }

  mutating func remove(at index: Int) {
    // Everything after `index` moves up one place.
    for place in index..<(endIndex - 1) { self[place] = self[place + 1] }
    if var moved = rest {
      rest = nil
      moved.removeLast()
      rest = moved.isEmpty ? nil : moved
    } else if second != nil {
      second = nil
    } else {
      first = nil
    }
  }

  // The members for a delivery, which holds the chain's lock only to take them: the first two
  // unretained (a member that leaves during a delivery is kept until it ends,
  // `AnyChain.hasRetired`), the rest in their array, retained when there is one.
  @inlinable var unretained: Borrowed {
    Borrowed(
      first: first.map { Unretained($0) },
      second: second.map { Unretained($0) }, rest: rest)
  }

  // The same, for a list with no members past the second.
  @inlinable var unretainedFirstTwo: Borrowed {
    Borrowed(
      first: first.map { Unretained($0) },
      second: second.map { Unretained($0) }, rest: nil)
  }

  @usableFromInline
  struct Borrowed {
    @usableFromInline let first: Unretained<Member>?
    @usableFromInline let second: Unretained<Member>?
    @usableFromInline let rest: ContiguousArray<Member>?

    @inlinable
    init(first: Unretained<Member>?, second: Unretained<Member>?, rest: ContiguousArray<Member>?) {
      self.first = first
      self.second = second
      self.rest = rest
    }

    // Calls `body` with each member, in order, without a retain each.
    @inlinable
    @inline(__always)
    func forEachMember(_ body: (Member) -> Void) {
      guard let first else { return }
      first.with(body)
      guard let second else { return }
      second.with(body)
      guard let rest else { return }
      for index in rest.indices {
        Unretained(rest[index]).with(body)
      }
    }
  }
}

// The members a delivery found gone (their objects deallocated), pruned after it. Most
// deliveries find none: then there is no list, and nothing to release (an optional array
// would be released even when nil, about 10 instructions in every delivery).
@usableFromInline
struct DeadMembers: ~Copyable {
  @usableFromInline
  final class List {
    @usableFromInline var members: [Member]
    init(_ member: Member) { members = [member] }
  }
  // Retained once while set; taken or released when this ends.
  @usableFromInline var list: Unmanaged<List>?

  @inlinable init() { list = nil }

  var count: Int { list?.takeUnretainedValue().members.count ?? 0 }

  @usableFromInline
  mutating func append(_ member: Member) {
    if let list {
      list.takeUnretainedValue().members.append(member)
    } else {
      list = Unmanaged.passRetained(List(member))
    }
  }

  @inlinable
  mutating func take() -> [Member]? {
    guard let taken = list else { return nil }
    list = nil
    return taken.takeRetainedValue().members
  }

  @inlinable
  deinit { list?.release() }
}
