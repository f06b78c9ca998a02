@_spi(Testing) import ChainBind
import Dispatch
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

// Stress and re-entrancy tests of the BoundToken protocol (BoundToken.swift, Member.swift,
// Registry.swift, ChainCore+Members.swift). Within Docs/Semantics.md, "Threading": a @Bound
// property is bound and set only by the thread that owns its object; unbinding (by code, by
// object and key path, by object) and deallocation happen on any thread.

// A pthread mutex (ThreadSanitizer does not see Synchronization.Mutex on Linux).
private final class Guarded<Value>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    return mutex
  }()
  private var value: Value
  init(_ value: Value) { self.value = value }
  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }
  func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return body(&value)
  }
}

private final class Handoffs: @unchecked Sendable {
  let codes = Guarded<[ChainCode]>([])
  let objects = Guarded<[[AnyObject]]>([])
  let finished = Atomic<Int>(0)
}

private final class Canary: @unchecked Sendable {
  var hits = 0
}

private final class Shared: @unchecked Sendable {
  let model = Guarded<Model?>(nil)
  let plain = Guarded<Plain?>(nil)
  let code = Guarded<ChainCode?>(nil)
  let graveyard = Guarded<[AnyObject]>([])
  let done = Atomic<Bool>(false)
}

private final class WeakList: @unchecked Sendable {
  private let lock = Guarded<[() -> AnyObject?]>([])
  func add(_ object: AnyObject) {
    lock.withLock { $0.append({ [weak object] in object }) }
  }
  var alive: Int { lock.withLock { list in list.filter { $0() != nil }.count } }
  var count: Int { lock.withLock { $0.count } }
}

private let stressIterations = 4000

@Suite struct TokenStressTests {
  // 1 + 2: one owner thread sets and re-binds; the others unbind by code, by object and key path
  // and by object, and release objects the owner hands off (so they die on other threads while
  // their chains are being unbound by code).
  @Test func setRebindUnbindAndReleaseOnOtherThreads() {
    let registry = ScopedRegistry()
    let start = registry.activeChainCount
    let shared = Shared()
    let weaks = WeakList()
    let threads = 6

    DispatchQueue.concurrentPerform(iterations: threads) { worker in
      registry.withScope {
        if worker == 0 {
          var model = Model()
          var plain = Plain()
          var canary = Canary()
          weaks.add(model); weaks.add(plain); weaks.add(canary)
          shared.model.withLock { $0 = model }
          shared.plain.withLock { $0 = plain }
          for index in 0..<stressIterations {
            if index % 3 == 0 {
              let chain = Bind.inout(model, \.int).out(plain, \.int)
                .out(key: "canary") { [canary] _ in canary.hits += 1 }
                .onError { [canary] _ in canary.hits += 0 }
              shared.code.withLock { $0 = chain.code }
            }
            if index % 7 == 0 {
              // A second member whose back conversion captures its own object.
              let other = Model()
              weaks.add(other)
              Bind.inout(model, \.int).inout(
                other, \.double, convert: { Double($0) },
                back: { [weak other] in other?.int == -1 ? nil : Int($0) })
              shared.graveyard.withLock { $0.append(other) }
            }
            model.int = index
            if index % 97 == 0 {
              // Hand the objects off and start over with fresh ones.
              shared.graveyard.withLock {
                $0.append(contentsOf: [model, plain, canary] as [AnyObject])
              }
              model = Model()
              plain = Plain()
              canary = Canary()
              weaks.add(model); weaks.add(plain); weaks.add(canary)
              shared.model.withLock { $0 = model }
              shared.plain.withLock { $0 = plain }
            }
          }
          shared.model.withLock { $0 = nil }
          shared.plain.withLock { $0 = nil }
          shared.graveyard.withLock {
            $0.append(contentsOf: [model, plain, canary] as [AnyObject])
          }
          shared.done.store(true, ordering: .releasing)
        } else {
          var spins = 0
          while !shared.done.load(ordering: .acquiring)
            || !shared.graveyard.withLock({ $0.isEmpty })
          {
            spins += 1
            switch (worker + spins) % 5 {
            case 0:
              if let code = shared.code.withLock({ $0 }) { Bind.unbind(code) }
            case 1:
              if let model = shared.model.withLock({ $0 }) { Bind.unbind(model, \.int) }
            case 2:
              if let plain = shared.plain.withLock({ $0 }) { Bind.unbind(plain, \.int) }
            case 3:
              if let model = shared.model.withLock({ $0 }) { Bind.unbind(model) }
            default:
              // Release handed-off objects here, racing with the unbinds above.
              let dropped = shared.graveyard.withLock { list -> [AnyObject] in
                defer { list.removeAll() }
                return list
              }
              if let code = shared.code.withLock({ $0 }), spins % 2 == 0 { Bind.unbind(code) }
              withExtendedLifetime(dropped) {}
            }
          }
        }
      }
    }
    #expect(registry.activeChainCount == start)
    #expect(weaks.alive == 0, "\(weaks.alive) of \(weaks.count) objects still alive")
  }

  // 2: objects deallocated on one thread while another unbinds their chains by code.
  @Test func deallocationRacesUnbindByCode() {
    let registry = ScopedRegistry()
    let start = registry.activeChainCount
    let weaks = WeakList()
    let rounds = 3000
    let handoffs = Handoffs()

    DispatchQueue.concurrentPerform(iterations: 3) { worker in
      registry.withScope {
        switch worker {
        case 0:
          for index in 0..<rounds {
            let model = Model()
            let mirror = Model()
            let plain = Plain()
            let canary = Canary()
            weaks.add(model); weaks.add(mirror); weaks.add(plain); weaks.add(canary)
            let chain = Bind.inout(model, \.int).inout(mirror, \.int).out(plain, \.int)
              .out(key: "k") { [canary] _ in canary.hits += 1 }
            model.int = index
            handoffs.codes.withLock { $0.append(chain.code) }
            handoffs.objects.withLock { $0.append([model, mirror, plain, canary]) }
          }
          handoffs.finished.add(1, ordering: .releasing)
        case 1:
          while handoffs.finished.load(ordering: .acquiring) == 0
            || !handoffs.objects.withLock({ $0.isEmpty })
          {
            let batch = handoffs.objects.withLock { list -> [[AnyObject]] in
              defer { list.removeAll() }
              return list
            }
            withExtendedLifetime(batch) {}
          }
        default:
          while handoffs.finished.load(ordering: .acquiring) == 0
            || !handoffs.codes.withLock({ $0.isEmpty })
          {
            let batch = handoffs.codes.withLock { list -> [ChainCode] in
              defer { list.removeAll() }
              return list
            }
            for code in batch { Bind.unbind(code) }
          }
        }
      }
    }
    #expect(registry.activeChainCount == start)
    #expect(weaks.alive == 0, "\(weaks.alive) of \(weaks.count) objects still alive")
  }

  // 3: a sink that re-binds, unbinds or moves the very property being set.
  @Test(arguments: 0..<5)
  func sinkRebindsOrUnbindsThePropertyBeingSet(mode: Int) {
    let registry = ScopedRegistry()
    let start = registry.activeChainCount
    let weaks = WeakList()
    registry.withScope {
      let model = Model()
      let plain = Plain()
      let canary = Canary()
      weaks.add(model); weaks.add(plain); weaks.add(canary)
      func bind() {
        Bind.inout(model, \.int).out(plain, \.int)
          .out(key: "re") { [weak model, weak plain, canary] value in
            canary.hits += 1
            guard let model, let plain else { return }
            switch mode {
            case 0: Bind.inout(model, \.int).out(plain, \.int)
            case 1: Bind.unbind(model, \.int)
            case 2: Bind.unbind(model)
            case 3:
              // Moves the property into another chain of the same type.
              let other = Model()
              Bind.inout(other, \.int).inout(model, \.int)
              Bind.unbind(other)
            default:
              // Unbinds its own chain by code, then binds the property again from scratch.
              if let chain = Optional(Bind.inout(model, \.int)) { Bind.unbind(chain.code) }
              Bind.inout(model, \.int).out(plain, \.int)
            }
          }
      }
      for index in 0..<500 {
        if index % 3 == 0 { bind() }
        model.int = index
        #expect(model.int == index)
      }
      Bind.unbind(model)
      Bind.unbind(plain)
    }
    #expect(registry.activeChainCount == start)
    #expect(weaks.alive == 0)
  }

  private final class Rebinder {
    @Bound var value = 0 { didSet { onSet?(self) } }
    var onSet: ((Rebinder) -> Void)?
  }

  private final class Hook {
    var int = 0 { didSet { onSet?() } }
    var onSet: (() -> Void)?
  }

  // 3: a setter that re-binds or unbinds the property being set, during delivery.
  @Test(arguments: 0..<3)
  func setterRebindsOrUnbindsDuringDelivery(mode: Int) {
    let registry = ScopedRegistry()
    let start = registry.activeChainCount
    weak var weakRebinder: Rebinder?
    weak var weakHook: Hook?
    registry.withScope {
      let rebinder = Rebinder()
      let hook = Hook()
      weakRebinder = rebinder
      weakHook = hook
      rebinder.onSet = { object in
        switch mode {
        case 0: Bind.inout(object, \.value)
        case 1: Bind.unbind(object, \.value)
        default: Bind.inout(object, \.value).out(hook, \.int)
        }
      }
      // An out member whose setter unbinds and re-binds the head.
      hook.onSet = { [unowned rebinder, unowned hook] in
        Bind.unbind(rebinder, \.value)
        Bind.inout(rebinder, \.value).out(hook, \.int)
      }
      Bind.inout(rebinder, \.value).out(hook, \.int)
      for index in 1...300 {
        rebinder.value = index
      }
      rebinder.onSet = nil
      hook.onSet = nil
      Bind.unbind(rebinder)
      Bind.unbind(hook)
    }
    #expect(registry.activeChainCount == start)
    #expect(weakRebinder == nil)
    #expect(weakHook == nil)
  }

  // Adding a member to a chain that is released while the member is being added (here: the
  // chain's only member, a plain head, is pruned by the add itself). Docs/Semantics.md,
  // "Errors": `.chainInactive`, "added nothing".
  @Test func addingToAChainThatPruningReleasesAddsNothing() {
    let registry = ScopedRegistry()
    registry.withScope {
      let model = Model()
      let mirror = Plain()
      let existing = Bind.inout(model, \.int).out(mirror, \.int)
      var head: Plain? = Plain()
      var errors: [BindingError.Cause] = []
      let chain = Bind.inout(head!, \.int).onError { errors.append($0.cause) }
      head = nil
      chain.inout(model, \.int)
      #expect(!chain.isActive)
      #expect(errors.count == 1)
      model.int = 42
      #expect(existing.isActive, "the failed add unbound model.int from its chain")
      #expect(mirror.int == 42, "the failed add unbound model.int from its chain")
    }
  }

  private final class Formatted {
    @Bound var text = ""
    var prefix = "#"
  }

  // Same, with a back conversion that captures its own object (LifetimeTests covers this after
  // an unbind): after the failed add and an unbind, nothing should keep the object alive.
  @Test func failedAddLeavesNoCycle() {
    weak var weakFormatted: Formatted?
    weak var weakCanary: Canary?
    let registry = ScopedRegistry()
    registry.withScope {
      let formatted = Formatted()
      weakFormatted = formatted
      let canary = Canary()
      weakCanary = canary
      var head: Plain? = Plain()
      let chain = Bind.inout(head!, \.int).onError { [canary] _ in canary.hits += 1 }
      head = nil
      chain.inout(
        formatted, \.text, convert: { "\($0)" },
        back: { Int($0.dropFirst(formatted.prefix.count)) })
      Bind.unbind(formatted)
      chain.unbind()
    }
    #expect(weakCanary == nil, "the chain's error handler is still reachable")
    #expect(weakFormatted == nil, "the object leaks: storage -> token -> member -> back -> object")
  }

  // The same failed add, reached by a release from another thread (Bind.unbind(code)) between
  // `add`'s isActive check and the registry attach. Counts the outcomes that fit neither order:
  // `.chainInactive` reported (the add "came after" the release) and yet model.int was moved
  // out of its own chain (the add "came before" it).
  @Test func addRacingUnbindByCode() {
    let registry = ScopedRegistry()
    let code = Guarded<ChainCode?>(nil)
    let done = Atomic<Bool>(false)
    let inconsistent = Atomic<Int>(0)
    let reported = Atomic<Int>(0)
    let rounds = 20000
    DispatchQueue.concurrentPerform(iterations: 2) { worker in
      registry.withScope {
        if worker == 0 {
          let model = Model()
          let mirror = Plain()
          for _ in 0..<rounds {
            let existing = Bind.inout(model, \.int).out(mirror, \.int)
            let head = Model()
            let failed = Atomic<Bool>(false)
            let chain = Bind.inout(head, \.int).onError { _ in
              failed.store(true, ordering: .relaxed)
            }
            code.withLock { $0 = chain.code }
            chain.inout(model, \.int)
            if failed.load(ordering: .relaxed) {
              reported.add(1, ordering: .relaxed)
              if !existing.isActive { inconsistent.add(1, ordering: .relaxed) }
            }
            Bind.unbind(model)
            Bind.unbind(head)
          }
          done.store(true, ordering: .releasing)
        } else {
          while !done.load(ordering: .acquiring) {
            if let code = code.withLock({ $0 }) { Bind.unbind(code) }
          }
        }
      }
    }
    print(
      "addRacingUnbindByCode: chainInactive reported \(reported.load(ordering: .relaxed)) times,",
      "inconsistent \(inconsistent.load(ordering: .relaxed))")
    #expect(inconsistent.load(ordering: .relaxed) == 0)
    #expect(registry.activeChainCount == 0)
  }

  private final class Trigger {
    let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
    deinit { action() }
  }

  // A deinit that runs during `add` (a dead member's conversion released by the add's own
  // pruning, after unlocking, as Registry.swift intends) and binds the property being added.
  @Test func deinitDuringAddBindsThePropertyBeingAdded() {
    let registry = ScopedRegistry()
    registry.withScope {
      let head = Model()
      let model = Model()
      let mirror = Plain()
      let other = Plain()
      var dying: Plain? = Plain()
      let chain = Bind.inout(head, \.int).out(mirror, \.int)
        .out(
          dying!, \.int,
          convert: { [trigger = Trigger { Bind.inout(model, \.int).out(other, \.int) }] in
            _ = trigger
            return $0
          })
      dying = nil
      chain.inout(model, \.int)
      model.int = 5
      let inChain = mirror.int == 5
      let inOther = other.int == 5
      #expect(
        inChain || inOther, "model.int is bound nowhere (chain has \(chain.memberCount) members)")
    }
  }
}
