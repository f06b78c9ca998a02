/// The ten slots of one draw: the draw rule that makes the chance to win exact.
///
/// `floor(winRate × 10)` slots hold the winning code and the others hold random 3-digit codes
/// that differ from it, so picking one slot uniformly wins with probability
/// `floor(winRate × 10) / 10`, exactly.
///
/// ```swift
/// var generator = SplitMix64(seed: 1)
/// let machine = SlotMachine(winRate: 0.25, winCode: "666", using: &generator)
/// machine.slots.filter { $0 == "666" }.count   // 2
/// ```
struct SlotMachine {
  /// The number of slots in every draw.
  static let slotCount = 10
  /// The winning code used when the model's is empty.
  static let fallbackWinCode = "666"

  /// The winning code this draw is played with.
  let winCode: String
  /// The slots, winning ones first; a draw picks one uniformly.
  let slots: [String]

  /// Fills the slots for a draw at `winRate` with `winCode` (or the fallback when it is empty).
  init(winRate: Double, winCode: String, using generator: inout some RandomNumberGenerator) {
    let winCode = Self.effectiveWinCode(winCode)
    let winning = Self.winningSlotCount(forRate: winRate)
    var slots = Array(repeating: winCode, count: winning)
    while slots.count < Self.slotCount {
      let code = Self.threeDigitCode(generator.next(upperBound: 1000))
      if code != winCode { slots.append(code) }
    }
    self.winCode = winCode
    self.slots = slots
  }

  /// The number of slots that hold the winning code: `floor(rate × 10)`, within 0…10.
  static func winningSlotCount(forRate rate: Double) -> Int {
    guard rate.isFinite else { return 0 }
    let count = (rate * Double(slotCount)).rounded(.down)
    return Int(min(max(count, 0), Double(slotCount)))
  }

  /// Whether `code` can be a winning code: at most 3 of the ASCII digits 0 to 9.
  ///
  /// Counted in Unicode scalars, not characters: a digit with a combining accent, a keycap or a
  /// zero-width joiner is one character that looks like a digit, and is not one.
  static func isWinCode(_ code: String) -> Bool {
    code.unicodeScalars.count <= 3 && code.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
  }

  /// The winning code a draw really uses: `code`, or "666" when it is empty.
  static func effectiveWinCode(_ code: String) -> String {
    code.isEmpty ? fallbackWinCode : code
  }

  /// Picks one slot uniformly and returns its index.
  func pick(using generator: inout some RandomNumberGenerator) -> Int {
    Int(generator.next(upperBound: UInt64(slots.count)))
  }

  private static func threeDigitCode(_ number: UInt64) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
  }
}
