import ChainBind
import Foundation
import Testing

// A `@Bound` member is named by its wrapper's storage (Docs/Semantics.md, "How members are
// named"): never by its type alone, through a superclass or a generic class too, and the same
// when many threads bind properties for the first time at once. A guard for any other way of
// finding the name (Docs/Performance.md, "Tried: no exclusivity check on `@Bound` storage").

private final class Pair {
  @Bound var first = 0
  @Bound var second = 0
}

private class Shape {
  @Bound var sides = 3
}

private final class Square: Shape {
  @Bound var corner = 0
}

private final class Box<Item> {
  @Bound var item: Item
  init(_ item: Item) { self.item = item }
}

// Unchecked: each thread binds its own property, and no thread sets one.
private final class Wide: @unchecked Sendable {
  @Bound var p0 = 0
  @Bound var p1 = 0
  @Bound var p2 = 0
  @Bound var p3 = 0
  @Bound var p4 = 0
  @Bound var p5 = 0
  @Bound var p6 = 0
  @Bound var p7 = 0
}

@Suite struct BoundNameTests {
  @Test func twoPropertiesOfOneTypeAreEachNamedByTheirOwnStorage() {
    let pair = Pair()
    // The second first: a name found by type would be the first property's.
    let second = Bind.in(pair, \.second)
    let first = Bind.in(pair, \.first)
    #expect(second.code.description.hasPrefix("Pair.second#"), "\(second.code)")
    #expect(first.code.description.hasPrefix("Pair.first#"), "\(first.code)")
    let other = Pair()
    let chain = Bind.in(other, \.first).out(other, \.second)
    #expect(chain.description.contains("Pair.first"), "\(chain)")
    #expect(chain.description.contains("Pair.second"), "\(chain)")
    for chain in [first, second, chain] { chain.unbind() }
  }

  @Test func anInheritedPropertyIsNamedOnAnObjectOfTheSubclass() {
    let square = Square()
    let sides = Bind.in(square as Shape, \Shape.sides)
    let corner = Bind.in(square, \.corner)
    #expect(sides.code.description.hasPrefix("Shape.sides#"), "\(sides.code)")
    #expect(corner.code.description.hasPrefix("Square.corner#"), "\(corner.code)")
    sides.unbind()
    corner.unbind()
  }

  @Test func eachSpecializationOfAGenericClassIsNamed() {
    let numbers = Bind.in(Box(1), \.item)
    let words = Bind.in(Box("one"), \.item)
    #expect(numbers.code.description.hasPrefix("Box<Int>.item#"), "\(numbers.code)")
    #expect(words.code.description.hasPrefix("Box<String>.item#"), "\(words.code)")
  }

  @Test func propertiesBoundForTheFirstTimeOnManyThreadsAtOnceAreEachNamed() {
    let wide = Wide()
    let count = 8
    let codes = LockedBox<[Int: String]>([:])
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = (0..<count).map { index in
      startThread {
        let paths: [ReferenceWritableKeyPath<Wide, Int>] = [
          \.p0, \.p1, \.p2, \.p3, \.p4, \.p5, \.p6, \.p7,
        ]
        ready.signal()
        go.wait()
        let chain = Bind.in(wide, paths[index])
        codes.withLock { $0[index] = chain.code.description }
        chain.unbind()
      }
    }
    for _ in 0..<count { ready.wait() }
    for _ in 0..<count { go.signal() }
    for finished in done { #expect(finished.wait(timeout: .now() + 30) == .success) }
    let named = codes.withLock { $0 }
    for index in 0..<count {
      #expect(named[index]?.hasPrefix("Wide.p\(index)#") == true, "\(named)")
    }
  }
}
