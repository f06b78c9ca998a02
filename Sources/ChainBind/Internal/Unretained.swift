// A reference that does not retain its object: the one place ChainBind holds or passes objects
// without reference counting (a retain and release on every change measured about 40
// instructions, a weak reference more).
//
// The invariant, for every `Unretained` in this module: while it is used as a reference (`with`,
// `object`), something else keeps its object alive, and the declaration that stores one says
// what. Where nothing may, it is only compared by `address`, never used. `retained(_:)` is the
// one exception: it holds a +1 that its owner gives back with `release()`.
@usableFromInline
@frozen
struct Unretained<Object: AnyObject>: @unchecked Sendable {
  @usableFromInline let reference: Unmanaged<Object>

  // Borrowed: not even an unoptimized build retains and releases the object to make one (which,
  // for an object in its deinit, would run the deinit again).
  @inlinable
  @inline(__always)
  init(_ object: borrowing Object) { reference = .passUnretained(object) }

  // The object at `address`, which an `Unretained` or `retained(_:)` of the same type gave.
  @inlinable
  @inline(__always)
  init(address: UnsafeRawPointer) { reference = .fromOpaque(address) }

  @inlinable
  @inline(__always)
  init(reference: Unmanaged<Object>) { self.reference = reference }

  // Keeps `object` alive until `release()`: for a reference published through an atomic word.
  static func retained(_ object: Object) -> Unretained {
    Unretained(reference: .passRetained(object))
  }

  func release() { reference.release() }

  // Takes a +1 on the object, which must be alive now, for a later `release()`.
  func retain() { _ = reference.retain() }

  @inlinable
  @inline(__always)
  var address: UnsafeMutableRawPointer { reference.toOpaque() }

  // Runs `body` with the object, retaining nothing: the object must outlive the call.
  @inlinable
  @inline(__always)
  func with<Result>(_ body: (Object) -> Result) -> Result {
    reference._withUnsafeGuaranteedRef(body)
  }

  // A strong reference, retained by the caller: the object must be alive now.
  @inlinable
  @inline(__always)
  var object: Object { reference.takeUnretainedValue() }

  @inlinable
  @inline(__always)
  func refers(to other: Object) -> Bool { address == Unmanaged.passUnretained(other).toOpaque() }
}

// The same object: by address.
extension Unretained: Equatable {
  @inlinable
  static func == (lhs: Unretained, rhs: Unretained) -> Bool { lhs.address == rhs.address }
}
