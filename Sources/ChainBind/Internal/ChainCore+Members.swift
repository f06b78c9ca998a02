// Adding members: find out whether the property is observable, build the member, attach it
// (join, move or replace), then give it the chain's current value.
extension ChainCore {
  // How a new member learns about changes.
  enum Source {
    // Probe for @Bound storage (and install a token there).
    case property
    // A control bound with `on:`: subscribe this closure's member to the event.
    case control((AnyMember) -> Void)
    static func subscribing<Control: ControlEventSource>(
      _ control: Control, _ event: Control.Event
    ) -> Self {
      .control { [weak control] member in control?.controlEvents.subscribe(member, to: event) }
    }
  }
  static func makeHead<Object: AnyObject>(
    _ object: Object, _ access: MemberAccess<Object, Value>, role: MemberRole, source: Source
  ) -> ChainCore<Value> {
    let registry = Registry.current
    if let existing = registry.member(of: object, keyPath: access.keyPath),
      let chain = existing.chain as? ChainCore<Value>, chain.isActive
    {
      // Starting from a member joins its chain (DESIGN §2.1).
      chain.add(object, access, role: role, source: source, conversion: IdentityConversion())
      return chain
    }
    let token = BoundToken<Value>()
    let probed: (value: Value, probe: BoundProbe?)
    switch source {
    case .property:
      let result = BoundProbe.read(object, access, installing: token)
      probed = (result.value, result.probe)
    case .control:
      probed = (access.read(object), nil)
    }
    let code = ChainCode(
      id: Registry.makeChainID(),
      head: MemberLabel(
        keyPath: access.keyPath, storageKeyPath: probed.probe?.storageKeyPath,
        resolvedPath: probed.probe?.storageKeyPath == nil
          ? access.storedPropertyName(in: object) : nil))
    let chain = ChainCore(registry: registry, code: code, current: probed.value)
    chain.attach(
      object, access, role: role, source: source, probe: probed.probe, token: token,
      conversion: IdentityConversion(), isHead: true)
    if chain.snapshotMembers().isEmpty { registry.release(chain) }
    return chain
  }
  func add<Object: AnyObject, Target>(
    _ object: Object, _ access: MemberAccess<Object, Target>, role: MemberRole, source: Source,
    conversion: some MemberConversion<Value, Target>
  ) {
    guard isActive else {
      report(
        BindingError(
          chain: code,
          member: MemberLabel(
            keyPath: access.keyPath, storageKeyPath: nil,
            resolvedPath: access.storedPropertyName(in: object)
          ).description,
          cause: .chainInactive))
      return
    }
    let token = BoundToken<Target>()
    var probe: BoundProbe?
    if case .property = source {
      probe = BoundProbe.read(object, access, installing: token).probe
    }
    pruneDeadMembers()
    attach(
      object, access, role: role, source: source, probe: probe, token: token,
      conversion: conversion, isHead: false)
  }

  private func attach<Object: AnyObject, Target>(
    _ object: Object, _ access: MemberAccess<Object, Target>, role: MemberRole, source: Source,
    probe: BoundProbe?, token: BoundToken<Target>,
    conversion: some MemberConversion<Value, Target>, isHead: Bool
  ) {
    let isObservable: Bool
    switch source {
    case .property: isObservable = probe?.installed ?? false
    case .control: isObservable = true
    }
    let member = KeyPathMember(
      object: object, access: access, chain: self, role: role,
      conversion: conversion)
    if let storageKeyPath = probe?.storageKeyPath {
      member.useBoundStorage(storageKeyPath, of: object)
    } else {
      member.usePlainStorage(of: object)
    }
    if role.sends && !isObservable {
      // DESIGN §2.2: reported at bind time; the member still receives when it can.
      let canReceive = member.canReceive
      report(member.error(canReceive ? .notObservable : .notObservableOrWritable))
      guard canReceive else { return }
      member.role = .out
    }
    if probe?.installed == true { token.observer = member }
    switch registry.attach(member, object: object) {
    case .attached: break
    case .chainInactive:
      report(member.error(.chainInactive))
      return
    case .chainReleased:
      return
    }
    if case .control(let subscribe) = source {
      subscribe(member)
    } else {
      trackControl(object, member: member)
    }
    // Initial sync (DESIGN §2.3); the head is where the current value came from.
    if member.role.receives && !isHead {
      switch member.receive(currentValue) {
      case .failed(let error): report(error)
      case .written, .unchanged, .skipped, .objectGone: break
      }
    }
    // A token this one replaced (kept by the probe) dies only after the new member is attached.
    withExtendedLifetime(probe) {}
  }
}
