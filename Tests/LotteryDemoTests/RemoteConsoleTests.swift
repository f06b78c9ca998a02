import ChainBind
import Dispatch
import Testing

@testable import LotteryDemo

// Set on the main queue, which runs the main actor's jobs. Not `Thread.isMainThread`: on Linux,
// once the test runner calls `dispatchMain()`, other threads drain the main queue.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

private func isOnMainQueue() -> Bool {
  DispatchQueue.getSpecific(key: mainQueueKey) == true
}

/// A main-actor widget added to the rate's chain: it records where each write ran.
@MainActor
private final class WitnessLabel {
  var text = "" {
    didSet { writesOnMainQueue.append(isOnMainQueue()) }
  }
  private(set) var writesOnMainQueue: [Bool] = []
}

/// Where the remote console's change ran; written by its thread before that thread is joined.
private final class ChangeRecord: @unchecked Sendable {
  var ranOnMainQueue: Bool?
}

@Suite @MainActor struct RemoteConsoleTests {
  @Test func theModelChangesAtOnceButTheScreenOnlyWhenTheMainActorDelivers() async {
    let (session, _) = makeSession()
    let view = session.view
    let lottery = session.lottery
    let witness = WitnessLabel()
    Bind.inout(lottery, \.winRate).out(witness, \.text, convert: { "\($0)" })
    let delivery = NextDelivery(on: Bind.inout(lottery, \.winRate))
    let record = ChangeRecord()

    RemoteConsole.run {
      record.ranOnMainQueue = isOnMainQueue()
      lottery.winRate = 0.3
    }
    #expect(record.ranOnMainQueue == false)
    #expect(lottery.winRate == 0.3)
    // Not yet: the change is queued for the main actor, which this test holds.
    #expect(view.rateLabel.text == "0.1")
    #expect(view.chanceLabel.text == "1 in 10")
    #expect(view.rateSlider.value == 0.1)
    #expect(witness.text == "0.1")
    #expect(witness.writesOnMainQueue == [true])  // the initial sync only

    await delivery.wait()
    #expect(view.rateLabel.text == "0.3")
    #expect(view.chanceLabel.text == "3 in 10")
    #expect(view.rateSlider.value == 0.3)
    #expect(!view.jackpotSwitch.isOn)
    #expect(witness.text == "0.3")
    #expect(witness.writesOnMainQueue == [true, true])
  }

  @Test func remoteCommandTellsWhatHappensAndTheScreenShowsTheNewRate() async {
    let (session, console) = makeSession()
    let witness = WitnessLabel()
    Bind.inout(session.lottery, \.winRate).out(witness, \.text, convert: { "\($0)" })

    await session.perform(.remote(0.3))
    let lines = console.lines
    #expect(
      Array(lines.prefix(3)) == [
        "  (background thread) the remote console sets lottery.winRate = 0.3",
        "  The model holds 0.3; the screen still shows rate 0.1:"
          + " the change waits for the main actor.",
        "  (main actor) the chain delivers the change: the screen shows rate 0.3.",
      ])
    #expect(lines.contains("| rate      0.3             chance  3 in 10    |"))
    #expect(lines.contains { $0.hasPrefix("| slider    [===o-------]") })
    #expect(session.lottery.winRate == 0.3)
    #expect(witness.writesOnMainQueue == [true, true])
  }

  @Test func remoteCommandDeliversEveryTimeEvenTheSameRate() async {
    let (session, console) = makeSession()
    await session.perform(.remote(0.7), showsScreen: false)
    await session.perform(.remote(0.7), showsScreen: false)
    let delivered = console.lines.filter { $0.hasPrefix("  (main actor)") }
    #expect(delivered.count == 2)
    #expect(delivered.allSatisfy { $0.hasSuffix("the screen shows rate 0.7.") })
    #expect(session.view.chanceLabel.text == "7 in 10")
  }

  @Test func aRateOfOneFromTheRemoteConsoleTurnsTheSwitchOn() async {
    let (session, _) = makeSession()
    await session.perform(.remote(1), showsScreen: false)
    #expect(session.view.jackpotSwitch.isOn)
    #expect(session.view.rateSlider.value == 1)
  }
}
