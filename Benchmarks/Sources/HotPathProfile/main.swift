// A plain executable for profiling the hot path under valgrind (no benchmark harness, no
// interposer): `set → 1 out` N times, for ChainBind or the hand-written floor.
//   HotPathProfile chainbind|scale|floor [N]   (scale: with 100 000 other live chains)
import ChainBind

final class Model { @Bound var value = 0 }
final class HandModel {
  var observers: [(Int) -> Void] = []
  var value = 0 { didSet { for o in observers { o(value) } } }
}
final class Target { var value = 0 }

@inline(never) func consume(_ x: Int) { if x == -1 { print(x) } }

let args = CommandLine.arguments
let kind = args.count > 1 ? args[1] : "chainbind"
let n = args.count > 2 ? Int(args[2]) ?? 100_000 : 100_000
let target = Target()
switch kind {
case "floor":
  let model = HandModel()
  model.observers.append { [weak target] in target?.value = $0 }
  for i in 0..<n { model.value = i }
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
  for i in 0..<n { model.value = i }
  consume(chain.memberCount)
  consume(others.count)
}
consume(target.value)
