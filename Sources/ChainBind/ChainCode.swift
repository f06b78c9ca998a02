/// The identity of a chain: stable for the chain's life, unique in the process.
///
/// Two `Bind` calls that start from the same property share a chain, and so its code.
/// Codes compare by identity only, never by hash or by text, so two chains never collide.
///
/// ```swift
/// let chain = Bind.inout(lottery, \.winCode)
/// chain.code                                        // Lottery.winCode#12
/// Bind.inout(lottery, \.winCode).code == chain.code  // true: the second call joins
/// Bind.unbind(chain.code)                           // releases the whole chain
/// ```
public struct ChainCode: Hashable, Sendable, CustomStringConvertible {
  let id: UInt64
  let head: MemberLabel
  // For `Bind.unbind(_:)`; weak: a code never keeps its chain.
  weak var chain: AnyChain?

  init(id: UInt64, head: MemberLabel, chain: AnyChain) {
    self.id = id
    self.head = head
    self.chain = chain
  }

  /// The head member the chain started from and the chain's number, as in
  /// `Lottery.winCode#12`.
  public var description: String { "\(head)#\(id)" }

  /// Returns whether two codes name the same chain.
  ///
  /// - Parameters:
  ///   - lhs: A chain code.
  ///   - rhs: Another chain code.
  /// - Returns: `true` when both name one chain.
  public static func == (lhs: ChainCode, rhs: ChainCode) -> Bool { lhs.id == rhs.id }

  /// Hashes the chain's identity.
  ///
  /// - Parameter hasher: The hasher to feed.
  public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
