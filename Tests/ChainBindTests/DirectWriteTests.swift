import Testing

@testable import ChainBind

// A member whose property is a plain stored property (no observers, no accessors) of a trivial
// type is read and written in place, at an offset found at bind time, instead of through its key
// path (see `MemberAccess.storedFieldOffset(in:)`; not on Apple platforms, where key-path
// descriptions cannot tell stored from computed properties). These tests pin which properties
// take that path and that every write behaves like a key-path write: values, equality, reference
// counting of what the property held, conversion, reverts.

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

private func hasDirectAccess<Object: AnyObject, Target>(
  _ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Target>
) -> Bool {
  MemberAccess.writable(keyPath).storedFieldOffset(in: object) != nil
}

@Suite struct DirectWriteTests {
  // MARK: Which properties are written in place

  /// Whether this platform writes any property in place.
  private static let writesInPlace: Bool = {
    #if canImport(Darwin)
      false
    #else
      true
    #endif
  }()

  @Test func plainStoredPropertiesOfTrivialTypesAreWrittenInPlace() {
    let target = DirectTarget()
    #expect(hasDirectAccess(target, \.int) == Self.writesInPlace)
    #expect(hasDirectAccess(target, \.optionalInt) == Self.writesInPlace)
    #expect(hasDirectAccess(target, \.point) == Self.writesInPlace)
    #expect(hasDirectAccess(target, \.tagged) == Self.writesInPlace)
    #expect(hasDirectAccess(DirectSubclass(), \.own) == Self.writesInPlace)
    #expect(hasDirectAccess(DirectGeneric(1), \.element) == Self.writesInPlace)
    // Reflection plays no part: a custom mirror changes nothing.
    #expect(hasDirectAccess(DirectCustomMirror(), \.int) == Self.writesInPlace)
  }

  @Test func propertiesWithCodePathsOrReferencesKeepTheirKeyPath() {
    let target = DirectTarget()
    // Observers, accessors and wrappers must run on every write.
    #expect(!hasDirectAccess(target, \.observed))
    #expect(!hasDirectAccess(target, \.computed))
    #expect(!hasDirectAccess(target, \.bound))
    // A path of several components.
    #expect(!hasDirectAccess(target, \.point.x))
    // Properties of a non-final class may be overridden.
    #expect(!hasDirectAccess(DirectBase(), \.inherited))
    #expect(!hasDirectAccess(DirectSubclass(), \.inherited))
    // Reference-counted values: a write in place skips the exclusivity check, and releasing the
    // old value under an overlapping access would be unsafe.
    #expect(!hasDirectAccess(target, \.string))
    #expect(!hasDirectAccess(target, \.optionalString))
    #expect(!hasDirectAccess(target, \.array))
    #expect(!hasDirectAccess(target, \.box))
    #expect(!hasDirectAccess(DirectGeneric("one"), \.element))
    // A read-only property is never written.
    #expect(MemberAccess.readable(\DirectTarget.constant).storedFieldOffset(in: target) == nil)
  }

  @Test(.enabled(if: writesInPlace)) func theOffsetIsTheProperty() throws {
    let target = DirectTarget()
    target.int = 41
    let access = MemberAccess.writable(\DirectTarget.int)
    let offset = try #require(access.storedFieldOffset(in: target))
    let base = UnsafeRawPointer(Unmanaged.passUnretained(target).toOpaque())
    #expect(base.load(fromByteOffset: offset, as: Int.self) == 41)
  }

  @Test func boundMembersAreComparedInTheirStorage() throws {
    let source = DirectSource()
    let other = DirectSource()
    let chain = Bind.inout(source, \.int).inout(other, \.int)
    let member = try #require(
      Registry.current.member(of: other, keyPath: \DirectSource.int)
        as? KeyPathMember<Int, DirectSource, Int>)

    #expect(!member.isWrittenInPlace)
    #expect(member.valueOffset >= 0)
    source.int = 3
    #expect(other.int == 3)
    other.int = 4
    #expect(source.int == 4)
    #expect(chain.isActive)
  }

  // MARK: Writes in place behave like key-path writes

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
