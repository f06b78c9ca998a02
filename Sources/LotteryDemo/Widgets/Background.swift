/// The screen's background, painted in one of three colours.
@MainActor
final class Background {
  /// The colour painted.
  var color = BackgroundColor.blue
}

/// The colours the background cycles through, one per issue.
enum BackgroundColor: CaseIterable {
  case blue, magenta, cyan

  /// The colour for issue `sn`: the three colours in turn, from blue for issue 1.
  init(issue sn: Int) {
    let all = Self.allCases
    self = all[(((sn - 1) % all.count) + all.count) % all.count]
  }

  /// The colour's name, as the plain screen shows it.
  var name: String {
    switch self {
    case .blue: "blue"
    case .magenta: "magenta"
    case .cyan: "cyan"
    }
  }

  /// The ANSI SGR parameters: this background with a foreground that reads on it.
  var ansiParameters: String {
    switch self {
    case .blue: "97;44"
    case .magenta: "97;45"
    case .cyan: "30;46"
    }
  }
}
