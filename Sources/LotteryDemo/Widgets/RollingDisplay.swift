/// The slot machine's three rolling digit wheels.
///
/// A chain hands it every drawn code (even the same code twice); it keeps the code and remembers
/// that the wheels should roll, which the screen plays as an animation on a terminal.
@MainActor
final class RollingDisplay {
  /// The code on the wheels; `nil` before the first draw.
  private(set) var code: String?
  /// Whether a roll to `code` has not been shown yet.
  private(set) var isRolling = false

  /// Rolls the wheels to `code`.
  func roll(to code: String?) {
    self.code = code
    isRolling = code != nil
  }

  /// The screen has shown the roll.
  func finishRolling() {
    isRolling = false
  }

  /// The three wheels, right-aligned; a wheel with no digit shows "-".
  var wheels: [Character] {
    let digits = Array(code ?? "").suffix(3)
    return Array(repeating: "-", count: 3 - digits.count) + digits
  }
}
