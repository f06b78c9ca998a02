// A plain executable for profiling ChainBind under valgrind (no benchmark harness, no
// interposer).
//   HotPathProfile chainbind|scale|floor [N]   `set → 1 out` N times (scale: with 100 000 other
//                                               live chains; floor: the hand-written peer)
//   HotPathProfile string [N]                  `set → 1 out` N times, Int → String
//   HotPathProfile double [N]                  `set → 1 out` N times, Int → Double
//   HotPathProfile filter [N]                  `set → 1 out` N times through a filter and a
//                                               convert closure (Int → String)
//   HotPathProfile sink [N]                    N sets of a chain with one sink, no members
//   HotPathProfile twoway [N]                  N sets alternating between the two `@Bound`
//                                               ends of a two-way pair
//   HotPathProfile churn [N]                   N cycles of: make a source and a target, bind
//                                               them, release both (auto-unbind)
//   HotPathProfile memory [N]                  binds N chains and exits with them all alive,
//                                               for valgrind's per-allocation-site report
import ChainBind

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

final class Model { @Bound var value = 0 }
final class HandModel {
  var observers: [(Int) -> Void] = []
  var value = 0 { didSet { for o in observers { o(value) } } }
}
final class Target { var value = 0 }
final class TextTarget { var text = "" }
final class NumberTarget { var number = 0.0 }

@inline(never) func consume(_ x: Int) { if x == -1 { print(x) } }

// The sets, with the source as a parameter: a global read in the loop would add a retain and a
// release of the source per set to both sides.
@inline(never) func setRepeatedly(_ model: Model, _ n: Int) { for i in 0..<n { model.value = i } }
@inline(never) func setAlternately(_ left: Model, _ right: Model, _ n: Int) {
  for i in 0..<n {
    if i & 1 == 0 { left.value = i } else { right.value = i }
  }
}
@inline(never) func setRepeatedly(_ model: HandModel, _ n: Int) {
  for i in 0..<n { model.value = i }
}

let args = CommandLine.arguments
let kind = args.count > 1 ? args[1] : "chainbind"
let n = args.count > 2 ? Int(args[2]) ?? 100_000 : 100_000
let target = Target()
switch kind {
case "floor":
  let model = HandModel()
  model.observers.append { [weak target] in target?.value = $0 }
  setRepeatedly(model, n)
case "string":
  let model = Model()
  let text = TextTarget()
  let chain = Bind.inout(model, \.value).out(text, \.text)
  setRepeatedly(model, n)
  consume(chain.memberCount + text.text.count)
case "filter":
  let model = Model()
  let text = TextTarget()
  let chain = Bind.inout(model, \.value)
    .filter { $0 >= 0 }
    .out(text, \.text, convert: { String($0) })
  setRepeatedly(model, n)
  consume(chain.memberCount + text.text.count)
case "sink":
  let model = Model()
  var total = 0
  let chain = Bind.inout(model, \.value).out(key: "sum") { total &+= $0 }
  setRepeatedly(model, n)
  consume(chain.memberCount + total)
case "double":
  let model = Model()
  let number = NumberTarget()
  let chain = Bind.inout(model, \.value).out(number, \.number)
  setRepeatedly(model, n)
  consume(chain.memberCount + Int(number.number))
case "twoway":
  let left = Model()
  let right = Model()
  let pair = Bind.inout(left, \.value).inout(right, \.value)
  setAlternately(left, right, n)
  consume(pair.memberCount + right.value)
case "churn":
  for _ in 0..<n {
    let model = Model()
    let target = Target()
    consume(Bind.inout(model, \.value).out(target, \.value).memberCount)
  }
  consume(Bind.activeChainCount)
case "memory":
  // valgrind --leak-check=full --show-leak-kinds=reachable: allocation sites with N blocks
  // are per chain.
  var pairs: [(Model, Target)] = []
  var chains: [Chain<Int>] = []
  pairs.reserveCapacity(n)
  chains.reserveCapacity(n)
  for _ in 0..<n { pairs.append((Model(), Target())) }
  for (m, t) in pairs { chains.append(Bind.inout(m, \.value).out(t, \.value)) }
  consume(pairs.count + chains.count)
  exit(0)
default:
  // "scale": 100 000 unrelated live chains first.
  var others: [(Model, Target, Chain<Int>)] = []
  if kind == "scale" {
    for _ in 0..<100_000 {
      let m = Model()
      let t = Target()
      others.append((m, t, Bind.inout(m, \.value).out(t, \.value)))
    }
  }
  let model = Model()
  let chain = Bind.inout(model, \.value).out(target, \.value)
  setRepeatedly(model, n)
  consume(chain.memberCount)
  consume(others.count)
}
consume(target.value)
