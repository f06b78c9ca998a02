import Testing

@testable import LotteryDemo

@Suite struct DrawRuleTests {
  struct RateCase: CustomTestStringConvertible, Sendable {
    let rate: Double
    let winningSlots: Int
    var testDescription: String { "rate \(rate): \(winningSlots) in 10" }
  }

  static let rates = [
    RateCase(rate: 0.0, winningSlots: 0),
    RateCase(rate: 0.1, winningSlots: 1),
    RateCase(rate: 0.25, winningSlots: 2),
    RateCase(rate: 0.5, winningSlots: 5),
    RateCase(rate: 0.95, winningSlots: 9),
    RateCase(rate: 1.0, winningSlots: 10),
  ]

  @Test(arguments: rates)
  func slotsHoldTheWinCodeFloorOfRateTimesTenTimes(_ example: RateCase) {
    #expect(SlotMachine.winningSlotCount(forRate: example.rate) == example.winningSlots)
    for seed in UInt64(0)..<50 {
      var generator = SplitMix64(seed: seed)
      let machine = SlotMachine(winRate: example.rate, winCode: "000", using: &generator)
      #expect(machine.slots.count == 10)
      #expect(machine.slots.filter { $0 == "000" }.count == example.winningSlots)
      for code in machine.slots where code != "000" {
        #expect(code.count == 3)
        #expect(Int(code).map { (0...999).contains($0) } == true)
      }
    }
  }

  @Test(arguments: rates)
  func pickingEachSlotOnceWinsExactlyTheRate(_ example: RateCase) {
    var wins = 0
    for slot in 0..<SlotMachine.slotCount {
      // The same seed fills the same slots, so the ten picks cover one draw's ten slots.
      let viewModel = LotteryViewModel(seed: 99)
      viewModel.lottery.winRate = example.rate
      let draw = viewModel.draw(pickingSlot: slot)
      #expect(viewModel.lottery.isWin == draw.isWin)
      if draw.isWin { wins += 1 }
    }
    #expect(wins == example.winningSlots)
  }

  @Test func ratesOutsideTheRangeAreClamped() {
    #expect(SlotMachine.winningSlotCount(forRate: -0.5) == 0)
    #expect(SlotMachine.winningSlotCount(forRate: 3) == 10)
    #expect(SlotMachine.winningSlotCount(forRate: .nan) == 0)
  }

  @Test func seededDrawsAtTheExtremesAlwaysLoseOrAlwaysWin() {
    let viewModel = LotteryViewModel(seed: 2024)
    viewModel.lottery.winRate = 0
    let losses = (0..<500).map { _ in viewModel.draw() }
    #expect(losses.filter(\.isWin).isEmpty)
    viewModel.lottery.winRate = 1
    let wins = (0..<500).map { _ in viewModel.draw() }
    #expect(wins.filter(\.isWin).count == 500)
  }

  @Test func seededPicksAreSpreadOverTheSlots() {
    // Deterministic with its seed: checks that the pick is not stuck on a few slots.
    var generator = SplitMix64(seed: 2024)
    var counts = Array(repeating: 0, count: 10)
    let machine = SlotMachine(winRate: 0.5, winCode: "666", using: &generator)
    for _ in 0..<10_000 { counts[machine.pick(using: &generator)] += 1 }
    #expect(counts.allSatisfy { (900...1100).contains($0) })
  }

  @Test func emptyWinCodeFallsBackTo666() {
    var generator = SplitMix64(seed: 1)
    let machine = SlotMachine(winRate: 0.3, winCode: "", using: &generator)
    #expect(machine.winCode == "666")
    #expect(machine.slots.filter { $0 == "666" }.count == 3)

    let viewModel = LotteryViewModel(seed: 1)
    viewModel.lottery.winCode = ""
    viewModel.lottery.winRate = 1
    let draw = viewModel.draw()
    #expect(draw == Draw(sn: 1, code: "666", winCode: "666"))
    #expect(viewModel.lottery.isWin)
  }

  @Test func drawAdvancesTheIssueAndSetsTheOutcome() throws {
    let viewModel = LotteryViewModel(seed: 2024)
    let lottery = viewModel.lottery
    #expect(lottery.sn == 1 && lottery.code == nil && !lottery.isWin)
    let draw = viewModel.draw()
    #expect(draw.sn == 1)
    #expect(lottery.sn == 2)
    #expect(lottery.code == draw.code)
    #expect(lottery.isWin == (draw.code == "666"))
    #expect(lottery.history == [draw])
  }

  @Test func sameSeedGivesTheSameDraws() {
    let first = LotteryViewModel(seed: 42)
    let second = LotteryViewModel(seed: 42)
    let other = LotteryViewModel(seed: 43)
    let codes = (0..<20).map { _ in first.draw().code }
    #expect(codes == (0..<20).map { _ in second.draw().code })
    #expect(codes != (0..<20).map { _ in other.draw().code })
  }

  @Test func splitMix64MatchesTheReferenceSequence() {
    // The first outputs of the reference SplitMix64 (Vigna) for seed 0.
    var generator = SplitMix64(seed: 0)
    #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
    #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
  }
}
