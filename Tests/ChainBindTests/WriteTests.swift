import ChainBind
import Testing

// Every member is written by a thunk specialized where it was added, in which the key-path
// literal folds into a direct access. These tests pin that such writes behave like key-path
// writes for every kind of property: stored, observed, computed, inherited, generic, nested,
// `@Bound`; values, equality, reference counting of what the property held, conversion, reverts.

/// A trivial value whose `==` looks at `id` only, so an "equal" value can still differ in `note`.
private struct DirectTagged: Equatable {
  var id: Int
  var note: Int
  static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
}

private final class DirectBox {
  let number: Int
  init(_ number: Int) { self.number = number }
}

private struct DirectPoint: Equatable {
  var x = 0
  var y = 0
}

/// Plain stored properties of every kind of type, and properties that must keep their key path.
private final class DirectTarget {
  var int = 0
  var string = ""
  var optionalString: String? = "start"
  var array: [Int] = []
  var point = DirectPoint()
  var tagged = DirectTagged(id: 0, note: 0)
  var optionalInt: Int? = 1
  var box: DirectBox?
  var observed = 0 { didSet { observedWrites += 1 } }
  var observedWrites = 0
  var computed: Int {
    get { int }
    set { int = newValue }
  }
  let constant = 7
  @Bound var bound = 0
}

private class DirectBase {
  var inherited = 0
}

private final class DirectSubclass: DirectBase {
  var own = 0
}

private final class DirectGeneric<Element> {
  var element: Element
  init(_ element: Element) { self.element = element }
}

private final class DirectCustomMirror: CustomReflectable {
  var int = 0
  var customMirror: Mirror { Mirror(self, children: []) }
}

/// A `@Bound` source of every type the tests bind.
private final class DirectSource {
  @Bound var int = 0
  @Bound var string = ""
  @Bound var optionalString: String? = nil
  @Bound var array: [Int] = []
  @Bound var tagged = DirectTagged(id: 0, note: 0)
  @Bound var box: DirectBox?
}

/// A control whose number is a plain stored property: read and reverted in place.
private final class DirectStepper: ControlEventSource {
  enum Event { case valueChanged }
  let controlEvents = ControlEvents<Event>()
  var number = 0

  func userSteps(to newNumber: Int) {
    number = newNumber
    controlEvents.send(.valueChanged)
  }
}

@Suite struct WriteTests {
  // MARK: Every kind of property

  @Test func everyKindOfPropertyIsWritten() {
    let source = DirectSource()
    let target = DirectTarget()
    let base = DirectBase()
    let subclass = DirectSubclass()
    let generic = DirectGeneric(0)
    let mirror = DirectCustomMirror()
    Bind.inout(source, \.int)
      .out(target, \.int)
      .out(target, \.observed)
      .out(target, \.bound)
      .out(target, \.point.x)
      .out(base, \.inherited)
      .out(subclass, \.inherited)
      .out(subclass, \.own)
      .out(generic, \.element)
      .out(mirror, \.int)

    source.int = 5

    #expect(target.int == 5)
    #expect(target.observed == 5)
    #expect(target.observedWrites == 1)
    #expect(target.bound == 5)
    #expect(target.point.x == 5)
    #expect(base.inherited == 5)
    #expect(subclass.inherited == 5)
    #expect(subclass.own == 5)
    #expect(generic.element == 5)
    #expect(mirror.int == 5)
  }

  @Test func keyPathValuesAndSubscriptsWorkLikeLiterals() {
    let source = DirectSource()
    let target = DirectTarget()
    target.array = [0, 0, 0]
    let intPath: ReferenceWritableKeyPath<DirectTarget, Int> = \.int
    let sourcePath: ReferenceWritableKeyPath<DirectSource, Int> = \.int
    var index = 1
    let chain = Bind.inout(source, sourcePath)
      .out(target, intPath)
      .out(target, \.array[index])
    index = 2

    source.int = 6

    #expect(target.int == 6)
    #expect(target.array == [0, 6, 0])
    Bind.unbind(target, \.array[1])
    source.int = 7
    #expect(target.array == [0, 6, 0])
    #expect(chain.memberCount == 2)
  }

  @Test func aComputedPropertyIsWrittenThroughItsSetter() {
    let source = DirectSource()
    let target = DirectTarget()
    Bind.inout(source, \.int).out(target, \.computed)

    source.int = 9

    #expect(target.int == 9)
  }

  @Test func boundMembersSendAndReceive() {
    let source = DirectSource()
    let other = DirectSource()
    let chain = Bind.inout(source, \.int).inout(other, \.int)

    source.int = 3
    #expect(other.int == 3)
    other.int = 4
    #expect(source.int == 4)
    #expect(chain.isActive)
  }

  // MARK: Writes behave like key-path writes

  @Test func valuesOfEveryTypeArriveAndStay() {
    let source = DirectSource()
    let target = DirectTarget()
    Bind.inout(source, \.int).out(target, \.int)
    Bind.inout(source, \.string).out(target, \.string)
    Bind.inout(source, \.optionalString).out(target, \.optionalString)
    Bind.inout(source, \.array).out(target, \.array)

    // Initial sync wrote the sources' values.
    #expect(target.int == 0)
    #expect(target.optionalString == nil)

    for round in 1...3 {
      source.int = round
      source.string = String(repeating: "long text ", count: round)
      source.optionalString = round == 2 ? nil : "value \(round)"
      source.array = Array(0..<round * 10)
      #expect(target.int == round)
      #expect(target.string == String(repeating: "long text ", count: round))
      #expect(target.optionalString == (round == 2 ? nil : "value \(round)"))
      #expect(target.array == Array(0..<round * 10))
    }
  }

  @Test func anEqualValueIsNotWritten() {
    let source = DirectSource()
    let target = DirectTarget()
    Bind.inout(source, \.tagged).out(target, \.tagged)

    source.tagged = DirectTagged(id: 1, note: 1)
    source.tagged = DirectTagged(id: 1, note: 99)  // equal, so never written

    #expect(target.tagged.note == 1)
    source.tagged = DirectTagged(id: 2, note: 2)
    #expect(target.tagged.note == 2)
  }

  @Test func referencesHeldByThePropertyAreRetainedAndReleased() {
    let source = DirectSource()
    let target = DirectTarget()
    Bind.inout(source, \.box).out(target, \.box)
    weak var first: DirectBox?
    weak var second: DirectBox?

    do {
      let box = DirectBox(1)
      first = box
      source.box = box
    }
    do {
      let box = DirectBox(2)
      second = box
      source.box = box
    }
    // Only the target holds the second box now.
    Bind.unbind(source)
    source.box = nil

    // The first box was released when the chain replaced it; the target retains the second.
    #expect(first == nil)
    #expect(second?.number == 2)
    #expect(target.box?.number == 2)
  }

  @Test func convertedValuesArrive() {
    let source = DirectSource()
    let target = DirectTarget()
    Bind.inout(source, \.int).out(target, \.string)
    Bind.inout(source, \.string).out(target, \.int, convert: { $0.count })

    source.int = 42
    source.string = "four"

    #expect(target.string == "42")
    #expect(target.int == 4)
  }

  @Test func aRejectedControlValueIsRevertedInPlace() {
    let source = DirectSource()
    let stepper = DirectStepper()
    Bind.inout(source, \.int)
      .inout(stepper, \.number, on: .valueChanged)
      .filter { $0 <= 10 }

    stepper.userSteps(to: 7)
    stepper.userSteps(to: 11)

    #expect(source.int == 7)
    #expect(stepper.number == 7)
  }

  @Test func observersStillRunForObservedProperties() {
    let source = DirectSource()
    let target = DirectTarget()
    Bind.inout(source, \.int).out(target, \.observed)

    source.int = 1
    source.int = 2

    // Initial sync (0 equals 0: not written), then two changes.
    #expect(target.observedWrites == 2)
    #expect(target.observed == 2)
  }

  @Test func aTargetThatDiedIsNotWritten() {
    let source = DirectSource()
    var received: [Int] = []
    weak var gone: DirectTarget?
    do {
      let target = DirectTarget()
      gone = target
      Bind.inout(source, \.int).out(target, \.int).out(key: "sink") { received.append($0) }
    }
    source.int = 5

    #expect(gone == nil)
    #expect(received == [0, 5])
  }
}
