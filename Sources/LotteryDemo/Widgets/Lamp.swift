/// The win lamp: dark until a draw wins, then lit and flashing.
@MainActor
final class Lamp {
  /// Whether the lamp is off.
  var isDark = true
  /// Whether the lamp is flashing.
  private(set) var isFlashing = false
  /// Whether a flash has started that the screen has not shown yet.
  private(set) var hasNewFlash = false

  /// Starts flashing (again, after every win).
  func startFlashing() {
    isFlashing = true
    hasNewFlash = true
  }

  /// Stops flashing.
  func stopFlashing() {
    isFlashing = false
    hasNewFlash = false
  }

  /// The screen has shown the start of the flash.
  func finishNewFlash() {
    hasNewFlash = false
  }
}
