/// The list of past draws, newest first.
@MainActor
final class HistoryList {
  /// The draws shown.
  var draws: [Draw] = []

  /// One draw as a row: issue, code, winning code, outcome.
  static func row(for draw: Draw) -> String {
    let issue = "#\(draw.sn)".padded(to: 5)
    return "\(issue) \(draw.code.padded(to: 4)) win code \(draw.winCode.padded(to: 4))"
      + (draw.isWin ? "WIN" : "-")
  }
}
