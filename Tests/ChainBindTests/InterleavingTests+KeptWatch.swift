import Observation
import Testing

@testable @_spi(Testing) import ChainBind

// White-box: the state below arises from a race at binding (a set while the binding's watch is
// adopted, another while the first read looks for `@Observable` properties), which no
// scenario reaches in a bounded exploration; it is made here directly.

@Observable
private final class Level: @unchecked Sendable {
  var level = 0
}

private final class Shown: @unchecked Sendable {
  let explorer: Explorer
  var value = -1 {
    didSet { explorer.point() }
  }
  init(_ explorer: Explorer) { self.explorer = explorer }
}

// In the interleavings' suite, which runs one scenario at a time: a test's scheduler is global.
extension InterleavingTests {
  /// The schedules explored, depth first: not all of them (two watches armed make Observation's
  /// order vary, and the exploration takes minutes); without the rule that a replaced kept watch
  /// makes the next read arm one, the first failing schedule comes within about 200.
  static let keptWatchLimit = 10_000

  // A flat member keeps the watch that fired (W0) and reads without arming another; here a read
  // that began before the member was known as flat left its own watch (W1) armed too. A set on
  // each of two threads fires both; one thread's keeping of W0 may come after the other's of W1
  // replaced (cancelled) W0, and then replace (cancel) W1: the next read arms a watch again, so
  // that later sets still reach the member, in every order.
  @Test("two watches kept in every order: a later set still reaches the member")
  func keptWatchReplacedByAnOlderOne() {
    let explorer = Explorer()
    let outcome = explorer.explore(limit: Self.keptWatchLimit, varies: true) {
      let meter = Level()
      let shown = Shown(explorer)
      let chain = Bind.in(meter, \.level).out(shown, \.value)
      meter.level = 1  // W0, the binding's watch, fires and is kept: the member is flat
      let watch = chain.core._state.members[0].tracked.map { source in
        ObservationTicket.observing(for: source) { meter.level }.1
      }
      return (
        [{ meter.level = 10 }, { meter.level = 11 }],
        {
          withExtendedLifetime(watch) {}
          guard watch != nil else { return "no second watch armed" }
          guard shown.value == meter.level else {
            return "shown \(shown.value), level \(meter.level)"
          }
          for next in 20...22 {
            meter.level = next
            if shown.value != next { return "after a later set \(next), shown \(shown.value)" }
          }
          chain.unbind()
          return nil
        }
      )
    }
    #expect(outcome.failure == nil, "\(outcome.failure.map(String.init(describing:)) ?? "")")
    #expect(outcome.isExhausted || explorer.runs == Self.keptWatchLimit)
  }
}
