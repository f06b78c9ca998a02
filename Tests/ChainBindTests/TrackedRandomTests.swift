@_spi(Testing) import ChainBind
import Foundation
import Testing

// Randomized test of tracked sources (Docs/Semantics.md, "Tracked sources"): random sequences of
// leaf sets, link replacements (to another node, a new node or nil) and deallocations on a small
// graph of `@Bound` links, with members reading nested paths, an optional link and a computed
// property. The reference is the key path itself, evaluated after every step: each member's sink
// must have received exactly the distinct consecutive values the key path took, and its `out`
// target must hold the current one.
//
// Environment: CHAINBIND_TRACKED_SEQUENCES (default 300), CHAINBIND_TRACKED_STEPS (default 40).

private final class Node {
  let id: Int
  @Bound var value: Int
  @Bound var next: Node?

  init(id: Int, value: Int) {
    self.id = id
    self.value = value
  }

  // A computed property over this node's value and its link's.
  var sum: Int { value + (next?.value ?? 100) }
}

private final class Root {
  @Bound var first: Node
  @Bound var second: Node

  init(first: Node, second: Node) {
    self.first = first
    self.second = second
  }

  // Branches: reads `second` only when `first.value` is even.
  var pick: Int { first.value % 2 == 0 ? second.value : first.value }
}

private final class Target {
  var value = 0
  var optional: Int? = nil
}

private final class Received<Value> {
  var values: [Value] = []
}

private enum Path: CaseIterable {
  case firstValue, firstNextValue, firstNextNextValue, optionalLink, computedSum, branching

  func read(_ root: Root) -> Int? {
    switch self {
    case .firstValue: root.first.value
    case .firstNextValue: root.first.next?.value
    case .firstNextNextValue: root.first.next?.next?.value
    case .optionalLink: root.second.next?.value
    case .computedSum: root.first.sum
    case .branching: root.pick
    }
  }
}

@Suite("Tracked sources: randomized")
struct TrackedRandomTests {
  @Test(arguments: 0..<2)
  func randomLinkAndLeafChangesMatchTheKeyPaths(shard: Int) {
    let environment = ProcessInfo.processInfo.environment
    let sequences = environment["CHAINBIND_TRACKED_SEQUENCES"].flatMap { Int($0) } ?? 300
    let steps = environment["CHAINBIND_TRACKED_STEPS"].flatMap { Int($0) } ?? 40
    var failures = 0
    for index in stride(from: shard, to: sequences, by: 2) {
      if let failure = run(seed: UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1, steps: steps) {
        Issue.record(Comment(rawValue: failure))
        failures += 1
        if failures == 3 { break }
      }
    }
  }
}

private func run(seed: UInt64, steps: Int) -> String? {
  var random = SplitMix64(seed: seed)
  var nodes = (0..<5).map { Node(id: $0, value: Int(random.next() % 10)) }
  nodes[0].next = nodes[1]
  nodes[1].next = nodes[2]
  let root = Root(first: nodes[0], second: nodes[3])
  var log: [String] = []
  return withIsolatedRegistry { () -> String? in
    let baseline = Bind.activeChainCount
    var received: [Path: Received<Int?>] = [:]
    var targets: [Path: Target] = [:]
    var chains: [Chain<Int?>] = []
    var intChains: [Chain<Int>] = []
    for path in Path.allCases {
      let seen = Received<Int?>()
      let target = Target()
      received[path] = seen
      targets[path] = target
      switch path {
      case .firstValue:
        intChains.append(
          Bind.in(root, \.first.value).out(target, \.value).out(key: "s") { seen.values.append($0) }
        )
      case .computedSum:
        intChains.append(
          Bind.in(root, \.first.sum).out(target, \.value).out(key: "s") { seen.values.append($0) })
      case .branching:
        intChains.append(
          Bind.in(root, \.pick).out(target, \.value).out(key: "s") { seen.values.append($0) })
      case .firstNextValue:
        chains.append(
          Bind.in(root, \.first.next?.value).out(target, \.optional)
            .out(key: "s") { seen.values.append($0) })
      case .firstNextNextValue:
        chains.append(
          Bind.in(root, \.first.next?.next?.value).out(target, \.optional)
            .out(key: "s") { seen.values.append($0) })
      case .optionalLink:
        chains.append(
          Bind.in(root, \.second.next?.value).out(target, \.optional)
            .out(key: "s") { seen.values.append($0) })
      }
    }
    // The expected sink values: the initial read, then each read that differs from the last.
    var expected: [Path: [Int?]] = Dictionary(
      uniqueKeysWithValues: Path.allCases.map { ($0, [$0.read(root)]) })
    for step in 0..<steps {
      let live = nodes
      let node = live[Int(random.next() % UInt64(live.count))]
      switch random.next() % 6 {
      case 0, 1:
        let value = Int(random.next() % 10)
        log.append("n\(node.id).value = \(value)")
        node.value = value
      case 2:
        let other = live[Int(random.next() % UInt64(live.count))]
        // No cycles: the nodes would keep each other alive (the test's leak, not ChainBind's).
        guard !reaches(other, node) else { continue }
        log.append("n\(node.id).next = n\(other.id)")
        node.next = other
      case 3:
        log.append("n\(node.id).next = nil")
        node.next = nil
      case 4:
        let fresh = Node(id: 100 + step, value: Int(random.next() % 10))
        nodes.append(fresh)
        if random.next() % 2 == 0 {
          log.append("first = new n\(fresh.id)")
          root.first = fresh
        } else {
          log.append("second = new n\(fresh.id)")
          root.second = fresh
        }
      default:
        // Let go of a node nothing reachable links to any more (deallocated when unreferenced).
        let reachable = Set(reachableIDs(from: root))
        let before = nodes.count
        nodes.removeAll { !reachable.contains($0.id) }
        log.append("release \(before - nodes.count) unreachable nodes")
      }
      for path in Path.allCases {
        let value = path.read(root)
        if expected[path]?.last != value { expected[path]?.append(value) }
      }
      for path in Path.allCases {
        let got = received[path]?.values ?? []
        let want = expected[path] ?? []
        let current = path.read(root)
        let target = targets[path]
        let targetValue: Int? =
          switch path {
          case .firstValue, .computedSum, .branching: target?.value
          default: target?.optional
          }
        if got != want || targetValue != current {
          return """
            seed \(seed), step \(step), path \(path): sink \(got), expected \(want); \
            target \(String(describing: targetValue)), key path \(String(describing: current))
            operations: \(log.joined(separator: "; "))
            """
        }
      }
    }
    for chain in chains { chain.unbind() }
    for chain in intChains { chain.unbind() }
    if Bind.activeChainCount != baseline {
      return "seed \(seed): \(Bind.activeChainCount) chains left, expected \(baseline)"
    }
    return nil
  }
}

private func reachableIDs(from root: Root) -> [Int] {
  var ids: [Int] = []
  var queue = [root.first, root.second]
  while let node = queue.popLast() {
    guard !ids.contains(node.id) else { continue }
    ids.append(node.id)
    if let next = node.next { queue.append(next) }
  }
  return ids
}

// Whether following `next` from `start` reaches `target` (`start` itself included).
private func reaches(_ start: Node, _ target: Node) -> Bool {
  var node: Node? = start
  var steps = 0
  while let current = node, steps < 1_000 {
    if current === target { return true }
    node = current.next
    steps += 1
  }
  return false
}
