@_spi(Testing) import ChainBind
import Foundation
import Testing

// `@Bound`: works in any class, costs one optional pointer, encodes like its value, and only
// stored properties are observable.

/// A non-final base class that declares a @Bound property.
private class Vehicle {
  @Bound var speed = 0
  init() {}
}

/// A subclass that inherits the @Bound property.
private final class Car: Vehicle {
  var wheels = 4
}

/// A subclass whose override of the inherited @Bound property gives a value of its own.
private final class Doubling: Vehicle {
  override var speed: Int {
    get { super.speed * 2 }
    set { super.speed = newValue / 2 }
  }
}

/// A subclass whose override clamps the inherited property, reading it twice; past a limit
/// (a plain property, which sends nothing) it reads another object's @Bound property too.
private final class Clamped: Vehicle {
  let limit = Limit()
  var isLimited = false
  override var speed: Int {
    get {
      if isLimited { return min(super.speed, limit.value) }
      return super.speed > 100 ? 100 : super.speed
    }
    set { super.speed = newValue }
  }
}

private final class Limit {
  @Bound var value = 50
}

/// A subclass with a read-only computed property over the inherited @Bound property.
private final class Parity: Vehicle {
  var parity: Int { speed % 2 }
}

/// A generic class with a @Bound property.
private final class Box<Value> {
  @Bound var value: Value

  init(_ value: Value) {
    self.value = value
  }
}

/// A Codable class whose properties are @Bound.
private final class Settings: Codable {
  @Bound var volume = 3
  @Bound var name = "default"
}

/// The same shape without @Bound: what Settings must encode like.
private struct PlainSettings: Codable, Equatable {
  var volume = 3
  var name = "default"
}

/// A Codable class with an optional @Bound property.
private final class Profile: Codable {
  @Bound var age = 1
  @Bound var nickname: String? = nil
}

/// The same shape without @Bound: what Profile must encode like.
private struct PlainProfile: Codable, Equatable {
  var age = 1
  var nickname: String?
}

/// A class with computed properties over plain and @Bound storage.
private final class Computed {
  var stored = 0
  @Bound var boundStored = 0
  var alias: Int {
    get { stored }
    set { stored = newValue }
  }
  var boundAlias: Int {
    get { boundStored }
    set { boundStored = newValue }
  }
}

@Suite struct BoundTests {
  @Suite struct AnyClass {
    @Test func subclassPropertyDeclaredInTheBaseIsObservableAsHead() {
      let car = Car()
      let plain = Plain()
      let chain = Bind.inout(car, \Car.speed).out(plain, \.int)
      car.speed = 80
      #expect(plain.int == 80)
      #expect(chain.memberCount == 2)
      #expect(chain.isActive)
    }

    @Test func subclassPropertyDeclaredInTheBaseIsObservableAsMember() {
      let model = Model()
      let car = Car()
      let log = ErrorLog()
      Bind.inout(model, \.int).onError(log.handler).inout(car, \Car.speed)
      car.speed = 50
      #expect(log.errors.isEmpty)
      #expect(model.int == 50)
      model.int = 60
      #expect(car.speed == 60)
    }

    @Test func subclassDeallocationRemovesItsMemberships() throws {
      try withIsolatedRegistry {
        let plain = Plain()
        var chain: Chain<Int>?
        weak var weakCar: Car?
        do {
          let car = Car()
          weakCar = car
          chain = Bind.inout(car, \Car.speed).out(plain, \.int)
        }
        let released = try #require(chain)
        #expect(weakCar == nil)
        #expect(!released.isActive)
        #expect(Bind.activeChainCount == 0)
      }
    }

    @Test func baseClassKeyPathAndSubclassKeyPathWorkOnTheSameObject() {
      let car = Car()
      let plain = Plain()
      Bind.inout(car, \Vehicle.speed).out(plain, \.int)
      car.speed = 30
      #expect(plain.int == 30)
    }

    // Docs/Semantics.md, "What is observable": through a subclass key path, an inherited
    // @Bound property is read again at each set (an override may give another value), and
    // every set is a change, as through the base class's key path.
    @Test func everySetOfAnInheritedPropertyIsAChangeThroughTheSubclassKeyPath() {
      let car = Car()
      let sent = sends(of: car, \Car.speed) {
        car.speed = 0
        car.speed = 0
        car.speed = 7
        car.speed = 7
      }
      #expect(sent == [0, 0, 0, 7, 7])
    }

    @Test func everySetIsAChangeForAnInoutInheritedMemberAndTheChainsWritesAreNoEcho() {
      let model = Model()
      let car = Car()
      let sent = LockedBox<[Int]>([])
      let chain = Bind.inout(model, \.int).inout(car, \Car.speed)
        .out(key: "k") { value in sent.withLock { $0.append(value) } }
      model.int = 3  // written into the car: not sent back
      #expect(car.speed == 3)
      #expect(sent.withLock { $0 } == [0, 3])
      car.speed = 3
      car.speed = 4
      #expect(sent.withLock { $0 } == [0, 3, 3, 4])
      #expect(model.int == 4)
      chain.unbind()
    }

    @Test func anOverrideOfAnInheritedPropertySendsItsOwnValueAtEverySet() {
      let doubling = Doubling()
      let sent = sends(of: doubling, \Doubling.speed) {
        (doubling as Vehicle).speed = 2  // the override's setter: the storage holds 1
        doubling.speed = 2
      }
      #expect(sent == [0, 2, 2])
    }

    @Test func anOverrideThatReadsTheInheritedPropertyTwiceSendsEverySet() {
      let clamped = Clamped()
      let sent = sends(of: clamped, \Clamped.speed) {
        clamped.speed = 5
        clamped.speed = 5
        clamped.speed = 200
        clamped.speed = 300
      }
      #expect(sent == [0, 5, 5, 100, 100])
    }

    // Only a set of the property itself is a change when the value is equal: a set of another
    // dependency the override reads sends what differs, as for any tracked source.
    @Test func anotherDependencyOfAnOverrideSendsOnlyWhatDiffers() {
      let clamped = Clamped()
      let sent = sends(of: clamped, \Clamped.speed) {
        clamped.isLimited = true
        clamped.speed = 80  // min(80, 50): reads `limit.value` from now on
        clamped.limit.value = 60  // 60: a change
        clamped.limit.value = 70  // 70
        clamped.limit.value = 90  // 80: min with the speed
        clamped.limit.value = 95  // 80 again: no change
        clamped.speed = 80  // a set of the property: sent, though equal
      }
      #expect(sent == [0, 50, 60, 70, 80, 80])
    }

    @Test func aReadOnlyComputedPropertyOverAnInheritedOneSendsOnlyWhatDiffers() {
      let parity = Parity()
      let sent = sends(of: parity, \.parity) {
        parity.speed = 2
        parity.speed = 3
        parity.speed = 5
      }
      #expect(sent == [0, 1])
    }

    // What a chain from `object`'s `keyPath` sends while `body` runs, its first value first.
    private func sends<Object: AnyObject>(
      of object: Object, _ keyPath: KeyPath<Object, Int>, _ body: () -> Void
    ) -> [Int] {
      let sent = LockedBox<[Int]>([])
      let chain = Bind.in(object, keyPath).out(key: "k") { value in
        sent.withLock { $0.append(value) }
      }
      body()
      chain.unbind()
      return sent.withLock { $0 }
    }

    @Test func genericClassPropertyIsObservable() {
      let box = Box("start")
      let model = Model()
      let log = ErrorLog()
      Bind.inout(model, \.string).onError(log.handler).inout(box, \.value)
      #expect(box.value == "")
      box.value = "boxed"
      #expect(model.string == "boxed")
      #expect(log.errors.isEmpty)
    }
  }

  @Suite struct Cost {
    @Test func unboundPropertyCostsOneOptionalPointer() {
      #expect(
        MemoryLayout<Bound<Int>>.size == MemoryLayout<Int>.size
          + MemoryLayout<UnsafeRawPointer>.size
      )
      #expect(
        MemoryLayout<Bound<Double>>.size
          == MemoryLayout<Double>.size + MemoryLayout<UnsafeRawPointer>.size)
    }
  }

  @Suite struct Coding {
    @Test func boundPropertiesEncodeLikePlainValues() throws {
      let settings = Settings()
      settings.volume = 7
      settings.name = "loud"
      let encoder = JSONEncoder()
      encoder.outputFormatting = .sortedKeys
      let encoded = try encoder.encode(settings)
      let expected = try encoder.encode(PlainSettings(volume: 7, name: "loud"))
      #expect(String(decoding: encoded, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func boundPropertiesRoundTripThroughJSON() throws {
      let settings = Settings()
      settings.volume = 9
      let data = try JSONEncoder().encode(settings)
      let decoded = try JSONDecoder().decode(Settings.self, from: data)
      #expect(decoded.volume == 9)
      #expect(decoded.name == "default")
      let plain = try JSONDecoder().decode(PlainSettings.self, from: data)
      #expect(plain == PlainSettings(volume: 9, name: "default"))
    }

    @Test func optionalBoundPropertyEncodesLikeAPlainOptional() throws {
      let encoder = JSONEncoder()
      encoder.outputFormatting = .sortedKeys
      let profile = Profile()
      profile.age = 30
      let encoded = try encoder.encode(profile)
      let expected = try encoder.encode(PlainProfile(age: 30, nickname: nil))
      #expect(String(decoding: encoded, as: UTF8.self) == String(decoding: expected, as: UTF8.self))

      let decoded = try JSONDecoder().decode(Profile.self, from: expected)
      #expect(decoded.age == 30)
      #expect(decoded.nickname == nil)

      profile.nickname = "nick"
      let roundTripped = try JSONDecoder().decode(
        Profile.self, from: try JSONEncoder().encode(profile))
      #expect(roundTripped.nickname == "nick")
    }

    @Test func boundMemberEncodesItsCurrentValue() throws {
      let settings = Settings()
      let model = Model(int: 11)
      Bind.inout(model, \.int).inout(settings, \.volume)
      model.int = 12
      let data = try JSONEncoder().encode(settings)
      let decoded = try JSONDecoder().decode(PlainSettings.self, from: data)
      #expect(decoded.volume == 12)
    }

    @Test func decodedObjectCanBeBound() throws {
      let data = Data(#"{"volume":4,"name":"n"}"#.utf8)
      let decoded = try JSONDecoder().decode(Settings.self, from: data)
      let plain = Plain()
      Bind.inout(decoded, \.volume).out(plain, \.int)
      #expect(plain.int == 4)
      decoded.volume = 5
      #expect(plain.int == 5)
    }
  }

  @Suite struct ComputedProperties {
    @Test func computedPropertyIsNotObservable() throws {
      let model = Model(int: 2)
      let computed = Computed()
      let log = ErrorLog()
      let chain = Bind.inout(model, \.int).onError(log.handler).inout(computed, \.alias)
      let error = try #require(log.errors.first)
      #expect(error.cause == .notObservable)
      #expect(computed.alias == 2)
      computed.alias = 8
      #expect(model.int == 2)
      #expect(chain.memberCount == 2)
    }

    // Docs/Semantics.md, "Tracked sources": a computed property over @Bound storage is observed
    // through it (0.1: not observable).
    @Test func computedPropertyOverBoundStorageIsTracked() throws {
      let model = Model(int: 3)
      let computed = Computed()
      let log = ErrorLog()
      Bind.inout(model, \.int).onError(log.handler).inout(computed, \.boundAlias)
      #expect(log.errors.isEmpty)
      #expect(computed.boundAlias == 3)
      model.int = 4
      #expect(computed.boundAlias == 4)
      computed.boundStored = 9
      #expect(model.int == 9)
    }
  }
}
