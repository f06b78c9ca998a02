// Adding members: find out whether the property is observable, build the member, attach it
// (join, move or replace), then give it the chain's current value.
extension ChainCore {
  // How a new member learns about changes.
  enum Source {
    // Probe for @Bound storage (and install a token there).
    case property
    // A control bound with `on:`: subscribe this closure's member to the event.
    case control((AnyMember) -> Void)
  }

  static func makeHead<Object: AnyObject>(
    _ object: Object, _ keyPath: KeyPath<Object, Value>, role: MemberRole, source: Source
  ) -> ChainCore<Value> {
    let registry = Registry.current
    if let existing = registry.member(of: object, keyPath: keyPath),
      let chain = existing.chain as? ChainCore<Value>, chain.isActive
    {
      // Starting from a member joins its chain (DESIGN §2.1).
      chain.add(
        object, keyPath, role: role, source: source, toMember: { $0 }, fromMember: { $0 })
      return chain
    }
    let token = BoundToken<Value>()
    let probed: (value: Value, probe: BoundProbe?)
    switch source {
    case .property:
      let result = BoundProbe.read(object, keyPath, installing: token)
      probed = (result.value, result.probe)
    case .control:
      probed = (object[keyPath: keyPath], nil)
    }
    let code = ChainCode(
      id: Registry.makeChainID(),
      head: MemberLabel(keyPath: keyPath, storageKeyPath: probed.probe?.storageKeyPath))
    let chain = ChainCore(registry: registry, code: code, current: probed.value)
    chain.attach(
      object, keyPath, role: role, source: source, probe: probed.probe, token: token,
      toMember: { $0 }, fromMember: { $0 })
    if chain.snapshotMembers().isEmpty { registry.release(chain) }
    return chain
  }

  func add<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, role: MemberRole, source: Source,
    toMember: ((Value) -> Target?)?, fromMember: ((Target) -> Value?)?
  ) {
    guard isActive else {
      report(
        BindingError(
          chain: code, member: MemberLabel(keyPath: keyPath, storageKeyPath: nil).description,
          cause: .chainInactive))
      return
    }
    let token = BoundToken<Target>()
    var probe: BoundProbe?
    if case .property = source {
      probe = BoundProbe.read(object, keyPath, installing: token).probe
    }
    attach(
      object, keyPath, role: role, source: source, probe: probe, token: token,
      toMember: toMember, fromMember: fromMember)
  }

  private func attach<Object: AnyObject, Target>(
    _ object: Object, _ keyPath: KeyPath<Object, Target>, role: MemberRole, source: Source,
    probe: BoundProbe?, token: BoundToken<Target>,
    toMember: ((Value) -> Target?)?, fromMember: ((Target) -> Value?)?
  ) {
    let isObservable: Bool
    switch source {
    case .property: isObservable = probe?.installed ?? false
    case .control: isObservable = true
    }
    let member = KeyPathMember(
      object: object, readPath: keyPath, chain: self, role: role,
      toMember: toMember, fromMember: fromMember)
    member.storageKeyPath = probe?.storageKeyPath
    if role.sends && !isObservable {
      // DESIGN §2.2: reported at bind time; the member still receives when it can.
      let canReceive = member.canReceive
      report(
        BindingError(
          chain: code, member: member.label.description,
          cause: canReceive ? .notObservable : .notObservableOrWritable))
      guard canReceive else { return }
      member.role = .out
    }
    if probe?.installed == true { token.observer = member }
    guard registry.attach(member, object: object) else {
      report(
        BindingError(chain: code, member: member.label.description, cause: .chainInactive))
      return
    }
    if case .control(let subscribe) = source {
      subscribe(member)
    } else {
      trackControl(object, member: member)
    }
    if member.role.receives {
      switch member.receive(currentValue) {
      case .failed(let error): report(error)
      case .written, .unchanged, .skipped, .objectGone: break
      }
    }
    // The token this one replaced (if any) dies only now, after the new member is attached.
    withExtendedLifetime(probe) {}
  }
}
