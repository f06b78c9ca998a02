@_spi(Testing) import ChainBind
import Dispatch
import Testing

// Docs/Semantics.md, "Tracked sources": a sending member observes every @Bound property that
// reading its key path reads, along a path or inside a computed getter.

private final class SubChild {
  @Bound var name = "a" { didSet { nameSets += 1 } }
  var nameSets = 0
}

private final class Child {
  @Bound var sub = SubChild()
}

private final class People {
  @Bound var child = Child()
}

private final class VM {
  @Bound var people = People()
  @Bound var maybe: People? = nil
}

private final class LoginViewModel {
  @Bound var username = ""
  @Bound var password = ""
  @Bound var usesPasscode = false
  @Bound var passcode = ""
  var reads = 0
  var isLoginEnabled: Bool {
    reads += 1
    return !username.isEmpty && password.count >= 6
  }
  // Reads `passcode` only when `usesPasscode`: the branch not taken is not tracked.
  var secret: String {
    reads += 1
    return usesPasscode ? passcode : password
  }
}

/// A getter that, once, sets a property it has just read (`hook`).
private final class SelfSetting {
  @Bound var flag = false
  @Bound var a = 1
  @Bound var b = 2
  var hook: (() -> Void)?
  var value: Int {
    guard flag else { return a }
    let read = b
    if let hook {
      self.hook = nil
      hook()
    }
    return read
  }
}

private final class Label {
  var text = "" { didSet { writes += 1 } }
  var isEnabled = false
  var writes = 0
}

@Suite("Tracked sources: nested key paths")
struct NestedPathTests {
  @Test("a change of the leaf of a nested path reaches the members")
  func leafChange() {
    let vm = VM()
    let label = Label()
    let chain = Bind.in(vm, \.people.child.sub.name).out(label, \.text)
    #expect(label.text == "a")
    vm.people.child.sub.name = "b"
    #expect(label.text == "b")
    chain.unbind()
  }

  @Test("replacing a link follows the new link and forgets the old one")
  func replacedLink() {
    let vm = VM()
    let label = Label()
    let chain = Bind.in(vm, \.people.child.sub.name).out(label, \.text)
    let old = vm.people.child.sub
    let replacement = SubChild()
    replacement.name = "new"
    vm.people.child.sub = replacement
    #expect(label.text == "new")
    let writes = label.writes
    old.name = "zombie"
    #expect(label.text == "new")
    #expect(label.writes == writes)
    replacement.name = "newer"
    #expect(label.text == "newer")
    chain.unbind()
  }

  @Test("a replaced link is not kept alive")
  func replacedLinkIsReleased() {
    let vm = VM()
    let label = Label()
    let chain = Bind.in(vm, \.people.child.sub.name).out(label, \.text)
    weak let old = vm.people.child.sub
    vm.people.child.sub = SubChild()
    #expect(old == nil)
    chain.unbind()
  }

  @Test("replacing a link near the root re-subscribes the whole rest of the path")
  func replacedRootLink() {
    let vm = VM()
    let label = Label()
    let chain = Bind.in(vm, \.people.child.sub.name).out(label, \.text)
    let oldPeople = vm.people
    let people = People()
    people.child.sub.name = "p2"
    vm.people = people
    #expect(label.text == "p2")
    oldPeople.child.sub.name = "ignored"
    #expect(label.text == "p2")
    people.child.sub.name = "followed"
    #expect(label.text == "followed")
    chain.unbind()
  }

  @Test("an optional link reads nil while it is nil, and is followed once set")
  func optionalLink() {
    let vm = VM()
    let seen = Recorder<String?>()
    let chain = Bind.in(vm, \.maybe?.child.sub.name).out(key: "seen") { seen.values.append($0) }
    #expect(seen.values == [nil])
    let people = People()
    vm.maybe = people
    #expect(seen.values == [nil, "a"])
    people.child.sub.name = "z"
    #expect(seen.values == [nil, "a", "z"])
    vm.maybe = nil
    #expect(seen.values == [nil, "a", "z", nil])
    chain.unbind()
  }

  @Test("a tracked member sends only when the value it reads changed")
  func onlyChangesAreSent() {
    let vm = VM()
    let seen = Recorder<String>()
    let chain = Bind.in(vm, \.people.child.sub.name).out(key: "seen") { seen.values.append($0) }
    vm.people.child.sub.name = "a"  // equal
    vm.people.child = Child()  // a new link with an equal value
    #expect(seen.values == ["a"])
    vm.people.child.sub.name = "c"
    #expect(seen.values == ["a", "c"])
    chain.unbind()
  }

  @Test("an inout member with a nested path is written through the leaf's setter, without echo")
  func writtenThroughTheLeaf() {
    let vm = VM()
    let model = LoginViewModel()
    let seen = Recorder<String>()
    let chain = Bind.inout(model, \.username)
      .inout(vm, \.people.child.sub.name)
      .out(key: "seen") { seen.values.append($0) }
    let sub = vm.people.child.sub
    #expect(sub.name == "")  // initial sync, through the leaf's setter
    let sets = sub.nameSets
    model.username = "ann"
    #expect(sub.name == "ann")
    #expect(sub.nameSets == sets + 1)
    #expect(seen.values == ["", "ann"])  // the write was not a change of its own
    sub.name = "bob"
    #expect(model.username == "bob")
    #expect(seen.values == ["", "ann", "bob"])
    chain.unbind()
  }

  @Test("the chain ends when its tracked member's object is deallocated")
  func rootDeallocation() {
    withIsolatedRegistry {
      let baseline = Bind.activeChainCount
      var vm: VM? = VM()
      let label = Label()
      let chain = Bind.in(vm!, \.people.child.sub.name).out(label, \.text)
      #expect(Bind.activeChainCount == baseline + 1)
      vm = nil
      #expect(!chain.isActive)
      #expect(Bind.activeChainCount == baseline)
    }
  }
}

@Suite("Tracked sources: computed properties")
struct ComputedPropertyTests {
  @Test("a computed property over @Bound properties is a source")
  func loginEnabled() {
    let login = LoginViewModel()
    let button = Label()
    let chain = Bind.in(login, \.isLoginEnabled).out(button, \.isEnabled)
    #expect(button.isEnabled == false)
    login.username = "ann"
    #expect(button.isEnabled == false)
    login.password = "secret1"
    #expect(button.isEnabled == true)
    login.username = ""
    #expect(button.isEnabled == false)
    chain.unbind()
  }

  @Test("a branch the getter did not take is not observed")
  func branchNotTaken() {
    let login = LoginViewModel()
    let label = Label()
    let chain = Bind.in(login, \.secret).out(label, \.text)
    let reads = login.reads
    login.passcode = "1234"  // not read: usesPasscode is false
    #expect(login.reads == reads)
    login.usesPasscode = true  // now the getter reads passcode, and not password
    #expect(label.text == "1234")
    let readsAfter = login.reads
    login.password = "unread"
    #expect(login.reads == readsAfter)
    login.passcode = "5678"
    #expect(label.text == "5678")
    chain.unbind()
  }

  @Test("binding a property a tracked member reads does not hide its changes from it")
  func bindingADependencyKeepsItObserved() {
    let login = LoginViewModel()
    let button = Label()
    let chain = Bind.in(login, \.isLoginEnabled).out(button, \.isEnabled)
    let other = Bind.inout(login, \.password).out(key: "x") { _ in }
    let again = Bind.inout(login, \.password)  // a join
    login.username = "ann"
    login.password = "secret1"
    #expect(button.isEnabled == true)
    chain.unbind()
    other.unbind()
    again.unbind()
  }

  // The read nested in the getter's set reads the newer value; the getter's own read, which
  // returns the older one, sends nothing.
  @Test("a getter that sets what it has just read leaves the member at the newer value")
  func getterSetsWhatItRead() {
    let model = SelfSetting()
    var sent: [Int] = []
    let chain = Bind.in(model, \.value).out(key: "k") { sent.append($0) }
    model.hook = { [unowned model] in model.b = 42 }
    model.flag = true
    #expect(model.value == 42)
    #expect(sent == [1, 42])
    chain.unbind()
  }

  // The getter's set took it into the other branch: the nested read's dependencies stand.
  @Test("a getter that sets what it has just read is observed as the nested read found it")
  func getterSetsWhatItReadKeepsTheNestedBranch() {
    let model = SelfSetting()
    var sent: [Int] = []
    let chain = Bind.in(model, \.value).out(key: "k") { sent.append($0) }
    model.b = 3
    model.flag = true
    model.hook = { [unowned model] in model.flag = false }
    model.b = 4  // reads b (4), the hook turns to `a`: the nested read reads 1
    #expect(model.value == 1)
    model.a = 5
    #expect(model.value == 5)
    #expect(sent == [1, 3, 1, 5])
    chain.unbind()
  }

  @Test("a one-step @Bound member still sends every set, even of an equal value")
  func flatMemberSendsEverySet() {
    let login = LoginViewModel()
    let seen = Recorder<String>()
    let chain = Bind.in(login, \.username).out(key: "seen") { seen.values.append($0) }
    login.username = ""
    login.username = ""
    #expect(seen.values == ["", "", ""])
    chain.unbind()
  }
}

private final class Recorder<Value> {
  var values: [Value] = []
}

private final class SharedName: @unchecked Sendable {
  @Bound var name = "s"
}

private final class Holder: @unchecked Sendable {
  let shared: SharedName
  @Bound var a = 0
  init(_ shared: SharedName) { self.shared = shared }
  var upper: String { shared.name.uppercased() }
  var total: Int { a + shared.name.count }
}

private final class Clamped {
  @Bound var n = 0 {
    didSet { if n > 10 { n = 10 } }
  }
}

private final class ClampHolder {
  @Bound var clamped = Clamped()
}

@Suite("Tracked sources: lifetime, clamps, threads")
struct TrackedEdgeTests {
  @Test(
    "the chain ends when the member's object dies, though what it read lives on",
    arguments: [false, true])
  func rootDiesDependencyLives(computed: Bool) {
    withIsolatedRegistry {
      let shared = SharedName()
      let baseline = Bind.activeChainCount
      var holder: Holder? = Holder(shared)
      let chain =
        computed
        ? Bind.in(holder!, \.upper).out(key: "k") { _ in }
        : Bind.in(holder!, \.shared.name).out(key: "k") { _ in }
      holder = nil
      shared.name = "t"  // a change of a live dependency finds the member's object gone
      #expect(!chain.isActive)
      #expect(Bind.activeChainCount == baseline)
    }
  }

  @Test("a clamp in the leaf's setter, written through a nested path, is a change")
  func clampThroughNestedPath() {
    let source = Model()
    let holder = ClampHolder()
    let chain = Bind.inout(source, \.int).inout(holder, \.clamped.n)
    source.int = 50
    #expect(holder.clamped.n == 10)
    #expect(source.int == 10)
    chain.unbind()
  }

  @Test("tracked members re-reading a shared property on two threads")
  func concurrentReReads() {
    let shared = SharedName()
    let first = Holder(shared)
    let second = Holder(shared)
    let firstChain = Bind.in(first, \.total).out(key: "k") { _ in }
    let secondChain = Bind.in(second, \.total).out(key: "k") { _ in }
    DispatchQueue.concurrentPerform(iterations: 2) { index in
      let holder = index == 0 ? first : second
      for value in 0..<2_000 { holder.a = value }
    }
    #expect(first.total == 1_999 + 1)
    shared.name = "long"
    firstChain.unbind()
    secondChain.unbind()
  }
}

/// A getter that reads `count`, then the first `count` of `parts` (in reverse when `backwards`):
/// what it reads grows, shrinks and changes order with `count`.
private final class Parts {
  @Bound var count = 1
  @Bound var backwards = false
  @Bound var p0 = 0
  @Bound var p1 = 0
  @Bound var p2 = 0
  @Bound var p3 = 0
  var reads = 0
  var total: Int {
    reads += 1
    let parts = [\Parts.p0, \.p1, \.p2, \.p3].prefix(count)
    return (backwards ? Array(parts.reversed()) : Array(parts)).reduce(0) { $0 + self[keyPath: $1] }
  }
}

@Suite("Tracked sources: what a getter reads changes from read to read")
struct TrackedReadsChangeTests {
  // Each step sets `count` (and `backwards`), then sets every part: exactly the parts the last
  // read read make the getter read again, and the chain ends at the total.
  @Test(
    "the member observes exactly what its last read read",
    arguments: [
      [1, 3, 1, 4, 2, 0, 4, 4, 1],
      [4, 0, 4, 2, 3, 3, 1, 0, 2],
    ])
  func observesTheLastRead(counts: [Int]) {
    let parts = Parts()
    var seen = 0
    let chain = Bind.in(parts, \.total).out(key: "total") { seen = $0 }
    for (step, count) in counts.enumerated() {
      parts.count = count
      parts.backwards = step % 3 == 1
      for (index, part) in [\Parts.p0, \.p1, \.p2, \.p3].enumerated() {
        let reads = parts.reads
        parts[keyPath: part] += 1
        #expect(
          parts.reads == reads + (index < count ? 1 : 0),
          "step \(step), count \(count), p\(index)")
      }
      #expect(seen == parts.total)
    }
    chain.unbind()
  }
}

/// `counter.value + offset`: a tracked member over another object's `@Bound` property.
private final class Offset {
  let counter: Counter
  let offset: Int
  init(_ counter: Counter, _ offset: Int) {
    self.counter = counter
    self.offset = offset
  }
  var value: Int { counter.value + offset }
}

private final class Counter {
  @Bound var value = 0
}

@Suite("Tracked sources: several members read one property")
struct SharedDependencyTests {
  // Three chains observe one property; they stop, one at a time, in every order: each set
  // reaches exactly the chains still bound.
  @Test(
    "each set reaches exactly the members still observing",
    arguments: [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
  func stopInAnyOrder(order: [Int]) {
    let counter = Counter()
    let readers = (0..<3).map { Offset(counter, $0 * 100) }
    var seen: [[Int]] = [[], [], []]
    let chains = readers.indices.map { index in
      Bind.in(readers[index], \.value).out(key: "seen") { seen[index].append($0) }
    }
    var bound = Set(readers.indices)
    for (step, stopping) in order.enumerated() {
      counter.value = step + 1
      for index in readers.indices {
        #expect(
          (seen[index].last == (step + 1) + index * 100) == bound.contains(index),
          "step \(step), reader \(index)")
      }
      chains[stopping].unbind()
      bound.remove(stopping)
    }
    counter.value = 99
    #expect(seen.allSatisfy { $0.last != 99 })
  }
}
