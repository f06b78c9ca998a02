import Synchronization

/// An object whose user edits it, and that says so by sending events.
///
/// A control (a text field, a slider, a switch: a widget of your own) owns a
/// ``ControlEvents`` and sends an event when its user changes it. Bind one of its properties
/// with `on:` and the chain reads that property whenever the event is sent. Programmatic sets
/// of the property are not changes; the events are.
///
/// ```swift
/// final class TextField: ControlEventSource {
///   enum Event { case editingChanged, editingDidEnd }
///   let controlEvents = ControlEvents<Event>()
///   var text = ""
///
///   func type(_ character: Character) {
///     text.append(character)
///     controlEvents.send(.editingChanged)
///   }
/// }
///
/// Bind.inout(model, \.name).inout(field, \.text, on: .editingChanged)
/// ```
///
/// When the control is deallocated, its ``ControlEvents`` goes with it and removes every
/// membership of the control's properties, whether bound with `on:` or not.
/// Each property of a control can be bound with its own event.
public protocol ControlEventSource: AnyObject {
  /// The events the control sends, such as `editingChanged` or `valueChanged`.
  associatedtype Event: Hashable

  /// The control's event channel. Return the same instance every time: store it.
  var controlEvents: ControlEvents<Event> { get }
}

/// The event channel of a control: chains subscribe to it, the control sends on it.
///
/// Store one in every ``ControlEventSource`` and call ``send(_:)`` when the user edits the control.
///
/// ```swift
/// let controlEvents = ControlEvents<SliderEvent>()
/// controlEvents.send(.valueChanged)   // every member bound `on: .valueChanged` sends its value
/// ```
///
/// Subscribing and unsubscribing are thread-safe. Sending runs on the caller's thread.
public final class ControlEvents<Event: Hashable>: Sendable {
  // Sending copies the list under the lock and calls members after unlocking, so no user code
  // runs under the lock.
  private let subscriptions = Locked<ContiguousArray<Subscription>>([])

  private struct Subscription {
    // nil: the member only needs removing when the control goes (an `out` member, say).
    let event: Event?
    weak var member: Member?
  }

  /// Creates an event channel with no subscribers.
  public init() {}

  /// Tells every member bound to this event that the control changed.
  ///
  /// Each subscribed member reads its property and sends the value into its chain. An event sent
  /// while a chain is writing into this control (its own update) is ignored: no echo.
  ///
  /// ```swift
  /// slider.value = 0.7
  /// slider.controlEvents.send(.valueChanged)   // chains bound on .valueChanged get 0.7
  /// ```
  ///
  /// - Parameter event: The event that happened.
  public func send(_ event: Event) {
    let current = subscriptions.withLock { $0 }
    for subscription in current where subscription.event == event {
      subscription.member?.controlEventDidFire()
    }
  }

  @usableFromInline
  func subscribe(_ member: Member, to event: Event?) {
    // Members found alive while pruning are kept in `live` and released after unlocking: a
    // member released under the lock could be the last reference, and its deinit runs user code.
    let live = subscriptions.withLock { subscriptions -> [Member] in
      var live: [Member] = []
      subscriptions.removeAll { subscription in
        guard let member = subscription.member else { return true }
        live.append(member)
        return false
      }
      subscriptions.append(Subscription(event: event, member: member))
      return live
    }
    withExtendedLifetime(live) {}
  }

  // The events `member` is subscribed to, to carry them over to the member that replaces it.
  func events(of member: Member) -> [Event] {
    // As in `subscribe`: members loaded from their weak references are released after unlocking.
    let (events, live) = subscriptions.withLock { subscriptions -> ([Event], [Member]) in
      var events: [Event] = []
      var live: [Member] = []
      for subscription in subscriptions {
        guard let subscribed = subscription.member else { continue }
        live.append(subscribed)
        if subscribed === member, let event = subscription.event { events.append(event) }
      }
      return (events, live)
    }
    withExtendedLifetime(live) {}
    return events
  }

  deinit {
    // The control is being deallocated: remove its memberships now (Docs/Semantics.md, "Lifetime").
    for subscription in subscriptions.withLock({ $0 }) {
      if let member = subscription.member {
        member.chain.registry.detach(member)
      }
    }
  }
}

// Subscribes a member to the events `previous`, the membership it replaces, was subscribed to;
// nil when there are none (Docs/Semantics.md, "Join and move").
func carriedEvents(of previous: Member, on object: AnyObject) -> ((Member) -> Void)? {
  guard let control = object as? any ControlEventSource else { return nil }
  func carry<Control: ControlEventSource>(_ control: Control) -> ((Member) -> Void)? {
    let events = control.controlEvents.events(of: previous)
    guard !events.isEmpty else { return nil }
    return { [weak control] member in
      for event in events { control?.controlEvents.subscribe(member, to: event) }
    }
  }
  return carry(control)
}

// Registers a member for removal when its object, a control, is deallocated.
func trackControl(_ object: AnyObject, member: Member) {
  guard let control = object as? any ControlEventSource else { return }
  func track<Control: ControlEventSource>(_ control: Control) {
    control.controlEvents.subscribe(member, to: nil)
  }
  track(control)
}

// The events `member`, a property of `object`, is subscribed to, named: for its chain's
// description.
func eventNames(of member: Member, on object: AnyObject) -> [String] {
  guard let control = object as? any ControlEventSource else { return [] }
  func names<Control: ControlEventSource>(_ control: Control) -> [String] {
    control.controlEvents.events(of: member).map { String(describing: $0) }
  }
  return names(control)
}
