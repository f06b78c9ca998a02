import ChainBind
import Observation
import OpenCombine
import Synchronization

// The objects every scenario binds, one kind per library. A target is a plain class, as a
// label or a view model would be; every library writes into the same kind of target.

/// A plain receiving object: what a label or a view is to a binding.
final class Target {
  var value = 0
  var text = ""
}

// MARK: ChainBind

final class BoundModel {
  @Bound var value = 0
}

// MARK: The hand-written floor

/// What a user writes without a library: a `didSet` that calls stored closures, each
/// capturing its target weakly.
final class HandModel {
  var observers: [(Int) -> Void] = []
  var value = 0 {
    didSet {
      for observer in observers { observer(value) }
    }
  }

  /// Adds an observer and syncs it once, like a chain's initial sync.
  func observe(_ observer: @escaping (Int) -> Void) {
    observers.append(observer)
    observer(value)
  }
}

/// Guards a two-way pair against echoes: the hand-written and Combine pairs use it.
final class EchoGuard {
  var isForwarding = false
}

// MARK: OpenCombine

final class PublishedModel {
  @Published var value = 0
}

// MARK: Observation

@Observable
final class ObservedModel {
  var value = 0
}

/// One observer of an `@Observable` model, re-armed after every change.
///
/// `withObservationTracking` fires once, in `willSet`, before the value changes, and must then be
/// armed again. Its `onChange` must be `@Sendable`, so it only raises a flag; the writer calls
/// `pump()` after the set, which re-arms the tracking and delivers the new value.
final class ObservationLink {
  private let model: ObservedModel
  private let deliver: (Int) -> Void
  private let changed = ChangeFlag()

  init(_ model: ObservedModel, deliver: @escaping (Int) -> Void) {
    self.model = model
    self.deliver = deliver
    arm()
  }

  private func arm() {
    let value = withObservationTracking {
      model.value
    } onChange: { [changed] in
      changed.raise()
    }
    deliver(value)
  }

  /// Delivers the change, if there was one, and re-arms the tracking.
  @inline(__always)
  func pump() {
    if changed.take() { arm() }
  }
}

final class ChangeFlag: Sendable {
  private let flag = Atomic<Bool>(false)
  func raise() { flag.store(true, ordering: .relaxed) }
  func take() -> Bool { flag.exchange(false, ordering: .relaxed) }
}
