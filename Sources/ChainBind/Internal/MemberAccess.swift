// How a member reaches its property: the key path, and the closures built for it where the
// member was added (`MemberThunks`). Members added at one call site share one when that site's
// closures capture nothing but its key path, one object however often it is formed (a literal,
// or a key path in a variable; `Registry.lookUp`): a member then holds one reference instead of
// two closures and a key path (Docs/Performance.md, "Memory"). The registry keeps a shared
// access while an attached member uses it, and the most recent idle ones for a while.
//
// @unchecked Sendable: immutable but for the registry's fields, guarded by its lock; the
// closures run only where their member is written or sends.
@usableFromInline
final class MemberAccess: @unchecked Sendable {
  // The property's identity, for join, move and unbind; the closures capture their own copy.
  let keyPath: AnyKeyPath
  // The `@Bound` storage found when binding: names the member in messages.
  let storageKeyPath: AnyKeyPath?
  // Writes a chain value into the property; nil when the member cannot receive.
  @usableFromInline let write: WriteThunk?
  // Converts the property's value and sends it; nil when the member cannot send.
  @usableFromInline let send: SendThunk?
  // Guarded by its registry shard's lock: whether this is the access its key shares, how many
  // attached members use it, whether it is queued among the idle ones the shard keeps for a
  // while, and whether a member used it again since.
  @exclusivity(unchecked) var isShared = false
  @exclusivity(unchecked) var attachedMembers = 0
  @exclusivity(unchecked) var isIdle = false
  @exclusivity(unchecked) var wasUsedAgain = false
  // Guarded by its registry shard's lock: the key path's hash, once a lookup among many
  // memberships of one object needed it (`Registry.Tables.membership(of:keyPath:garbage:)`).
  @exclusivity(unchecked) private var storedHash: Int?

  // Registry lock held.
  var keyPathHash: Int {
    if let storedHash { return storedHash }
    let hash = keyPath.hashValue
    storedHash = hash
    return hash
  }

  // Names the property in messages and chain codes.
  var label: MemberLabel { MemberLabel(keyPath: keyPath, storageKeyPath: storageKeyPath) }

  init(keyPath: AnyKeyPath, storageKeyPath: AnyKeyPath?, write: WriteThunk?, send: SendThunk?) {
    self.keyPath = keyPath
    self.storageKeyPath = storageKeyPath
    self.write = write
    self.send = send
  }
}

// What makes the closures of one call site the same for every member added there: the key-path
// literal, the types they were specialized for, and how they were built. Only closures built by
// ChainBind's own conversions have one; a caller's closure may capture anything.
struct MemberAccessKey: Hashable {
  // Also the object's type and the property's: a key path's root and value types are its own.
  let keyPath: ObjectIdentifier
  // The chain's type.
  let value: ObjectIdentifier
  let recipe: MemberThunksRecipe
}

// How `MemberThunks` built its closures, when nothing of the caller's went into them.
@usableFromInline
struct MemberThunksRecipe: Hashable, Sendable {
  @usableFromInline
  enum Conversion: UInt8, Sendable {
    // The property has the chain's type.
    case same
    // `BindConvertible` to `BindConvertible` (Docs/Semantics.md, "Automatic conversion").
    case automatic
    // Bool to Bool or to `BindConvertible`, negated or not (Docs/Semantics.md, "Negation").
    case negated, notNegated
  }

  @usableFromInline let conversion: Conversion
  // Through a writable key path (`writable`), or one that may not be (`readable`).
  @usableFromInline let isWritable: Bool
  // Sends by reading a control's property, not the value a `@Bound` setter passes.
  @usableFromInline let isControl: Bool

  @inlinable
  init(_ conversion: Conversion, isWritable: Bool, isControl: Bool) {
    self.conversion = conversion
    self.isWritable = isWritable
    self.isControl = isControl
  }
}
