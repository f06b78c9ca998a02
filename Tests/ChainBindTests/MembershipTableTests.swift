import Testing

@testable import ChainBind

// The registry's table of memberships (MembershipTable.swift) against a plain model: random
// inserts and removals, with tables small enough that runs wrap around and collide, and every
// object's memberships checked after each step.

private final class Owner {}

@Suite("The registry's membership table")
struct MembershipTableTests {
  @Test(
    "random inserts and removals, one or all of an object's, find every membership, and only those",
    arguments: 0..<8)
  func randomSteps(seed: Int) {
    var random = SplitMix64(seed: UInt64(seed) &+ 1_000)
    let owners = (0..<24).map { _ in Owner() }
    let access = MemberAccess(keyPath: \Owner.self, storageKeyPath: nil, write: nil, send: nil)
    let chain = AnyChain(registry: Registry.sharedReference, id: 1, head: access)
    var table = MembershipTable()
    var model: [ObjectIdentifier: [Member]] = [:]
    var all: [Member] = []

    for _ in 0..<600 {
      if all.isEmpty || random.next() % 3 != 0 {
        let owner = owners[Int(random.next() % UInt64(owners.count))]
        let member = Member(object: owner, access: access, chain: chain, role: .out)
        table.insert(member)
        model[member.objectID, default: []].append(member)
        all.append(member)
      } else if random.next() % 4 != 0 {
        let member = all.remove(at: Int(random.next() % UInt64(all.count)))
        table.remove(member)
        model[member.objectID]?.removeAll { $0 === member }
      } else {
        // All of one object's memberships at once (`Bind.unbind(object)`).
        let id = ObjectIdentifier(owners[Int(random.next() % UInt64(owners.count))])
        let removed = table.removeAll(of: id).map(ObjectIdentifier.init)
        #expect(Set(removed) == Set((model[id] ?? []).map(ObjectIdentifier.init)))
        #expect(removed.count == (model[id] ?? []).count)
        all.removeAll { $0.objectID == id }
        model[id] = nil
      }
      #expect(table.count == all.count)
      for owner in owners {
        let id = ObjectIdentifier(owner)
        var found: [ObjectIdentifier] = []
        table.forEach(of: id) { found.append(ObjectIdentifier($0)) }
        let expected = (model[id] ?? []).map(ObjectIdentifier.init)
        #expect(Set(found) == Set(expected))
        #expect(found.count == expected.count)
      }
    }
  }

  @Test("the table grows with its members, and shrinks when most have gone")
  func growsAndShrinks() {
    let owners = (0..<1_000).map { _ in Owner() }
    let access = MemberAccess(keyPath: \Owner.self, storageKeyPath: nil, write: nil, send: nil)
    let chain = AnyChain(registry: Registry.sharedReference, id: 1, head: access)
    var table = MembershipTable()
    let members = owners.map { Member(object: $0, access: access, chain: chain, role: .out) }
    for member in members { table.insert(member) }
    #expect(table.capacity == 2_048)
    for member in members.dropFirst(10) { table.remove(member) }
    #expect(table.count == 10)
    #expect(table.capacity == 64)
    for (owner, member) in zip(owners, members).prefix(10) {
      var found: [Member] = []
      table.forEach(of: ObjectIdentifier(owner)) { found.append($0) }
      #expect(found.count == 1 && found.first === member)
    }
  }

  @Test("removing a member it does not hold changes nothing")
  func removeAbsent() {
    let owner = Owner()
    let access = MemberAccess(keyPath: \Owner.self, storageKeyPath: nil, write: nil, send: nil)
    let chain = AnyChain(registry: Registry.sharedReference, id: 1, head: access)
    var table = MembershipTable()
    let held = Member(object: owner, access: access, chain: chain, role: .out)
    table.remove(held)
    table.insert(held)
    table.remove(Member(object: owner, access: access, chain: chain, role: .out))
    var found = 0
    table.forEach(of: ObjectIdentifier(owner)) { _ in found += 1 }
    #expect(found == 1)
    #expect(table.count == 1)
  }
}
