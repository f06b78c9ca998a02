import Synchronization

#if os(Linux)
  // The didSet form of withObservationTracking (Docs/Semantics.md, "Tracked sources").
  @_spi(SwiftUI) import Observation
#else
  import Observation
#endif

// Tracked sources (Docs/Semantics.md, "Tracked sources"): a sending member whose key path reads
// @Bound properties other than its own one-step property (a nested path, a computed property)
// observes every @Bound property the read touched. A change of any of them makes the member read
// its key path again, on the changing thread, collecting the properties anew, and send the value
// when it differs from the one it last read (or, for a set of its own property seen through a
// subclass key path, `ownToken`, also when equal; not in a batch, nor after a drain).

// Collects the @Bound properties one read touches, on the reading thread. The getters report to
// it through `BoundProbe` (BoundToken.swift), which the same thread-local pointer reaches.
//
// A tracked member keeps one for all its reads. While a read touches what the last one touched,
// in the same order (the common case), it only counts and retains the tokens: nothing is listed,
// allocated or observed anew. From the first difference on, it lists the tokens, and the member
// brings its observations up to date when the read ends (`TrackedSource.collect`).
final class DependencyCollector {
  // What the member's last read touched, in order: the tokens it observes. Addresses only,
  // except for the first `matched`, which this read retains.
  @exclusivity(unchecked) private(set) var observed: ContiguousArray<Unretained<BoundToken>> = []
  // How many of this read's tokens were `observed`'s first ones, in order.
  @exclusivity(unchecked) private var matched = 0
  // This read's tokens, once one differed from `observed`; each retained until the read ends,
  // so that none dies before the member observes it.
  @exclusivity(unchecked) private(set) var tokens: ContiguousArray<Unretained<BoundToken>> = []
  @exclusivity(unchecked) private var diverged = false
  // The read (the last one, once it ended) reached a property through an object of a subclass
  // of its declaring class, which may override a property along the path (`TrackedSource.collect`).
  @exclusivity(unchecked) private(set) var readSubclassObject = false
  // The member reading: it observes a property new to it as the read reaches it, before the
  // value is read, so that a change made at any moment after that leads to a re-read
  // (Docs/Semantics.md, "Tracked sources"). Unretained (called without a retain of its own):
  // the member owns this collector, or holds it for the read.
  @exclusivity(unchecked) private var source: Unretained<TrackedSource>?
  // A token the member observed died since its last read (`TrackedSource.tokenEnded`): a new
  // one may have its address. Then an address says nothing, and what the read reaches is
  // observed now.
  let addressesMislead = Atomic<Bool>(false)

  init() {}

  deinit { end() }

  // A read for `source` (nil: a probe's read, which observes nothing) begins.
  func begin(for source: TrackedSource?) {
    end()
    self.source = source.map { Unretained($0) }
    readSubclassObject = false
    // Cleared only where a read brought the observations up to date (`TrackedSource.collect`):
    // a token may die at any moment.
    if source?.observationsMayHaveMoved == true { addressesMislead.store(true, ordering: .relaxed) }
  }

  // Whether the read touched exactly what the last one did, in the same order.
  var touchedTheSame: Bool { !diverged && matched == observed.count }
  // Whether the read touched any @Bound property.
  var touchedAny: Bool { matched > 0 || !tokens.isEmpty }

  // The read ends: what it retained is released.
  func end() {
    for index in 0..<matched { observed[index].release() }
    matched = 0
    while let token = tokens.popLast() { token.release() }
    diverged = false
    source = nil
  }

  // Every token this read touched becomes `observed`, for the member to observe: held until the
  // read ends.
  func takeTokens() -> ContiguousArray<Unretained<BoundToken>> {
    if !diverged { diverge() }
    observed.replaceContents(with: tokens)
    return observed
  }

  // A @Bound property was read, of an object of exactly its declaring class or not: observe it
  // through its storage's token. Returns the token to install when the storage has none.
  // `existing`: alive while the reader holds its object's stripe.
  func visit(_ existing: Unretained<BoundToken>?, isDeclaredClass: Bool) -> BoundToken? {
    if !isDeclaredClass { readSubclassObject = true }
    guard let existing else {
      let token = BoundToken()
      record(Unretained(token))
      return token
    }
    record(existing)
    return nil
  }

  private func record(_ token: Unretained<BoundToken>) {
    let addressesMislead = addressesMislead.load(ordering: .acquiring)
    if !diverged {
      if !addressesMislead && matched < observed.count && observed[matched] == token {
        observed[matched].retain()
        matched += 1
        return
      }
      // Read again (a getter that reads a property twice): nothing new.
      if observed[..<matched].contains(token) { return }
      diverge()
    }
    if tokens.contains(token) { return }
    token.retain()
    tokens.append(token)
    // Observed now unless the last read observed it (by address, unless addresses mislead).
    if let source, addressesMislead || !observed.contains(token) {
      source.with { $0.observeNow(token) }
    }
  }

  // From here on, the tokens are listed: the matched ones first, retained since they were read.
  private func diverge() {
    diverged = true
    for index in 0..<matched { tokens.append(observed[index]) }
    matched = 0
  }
}

// What a tracked member observes, and the value it last read. Not generic: what depends on the
// member's types is in `reread`.
//
// The tokens it observes are held unretained, so that they die with their objects (objects along
// a path are not kept, Docs/Semantics.md, "Tracked sources") and get no side table a weak
// reference would give them, which slows every retain of a token. They are touched only under
// `state`'s lock, and a dying token takes that lock (`tokenEnded`) before its memory goes.
//
// @unchecked Sendable: `state` lives in its lock; the rest is fixed at creation.
final class TrackedSource: @unchecked Sendable {
  private struct State {
    var dependencies: ContiguousArray<Unretained<BoundToken>> = []
    // Cleared when the membership ends (a notification under way may outlive it). Not weak: a
    // weak reference gives the member a side table, which slows every retain of it.
    var member: Member?
    #if os(Linux)
      // The last watch that fired and re-read: kept armed until a read that began after its
      // firing has armed its own, so that a change made meanwhile fires it again
      // (`ObservationTicket.fired`). `keptSince`: the read generation when it fired.
      var firedWatch: FiredWatch?
      var keptSince = 0
    #endif
  }

  private let state: SpinLocked<State>
  // Counts this source's reads under Observation (ObservationTicket).
  let readGeneration = Atomic<Int>(0)
  // Counts the changes its watches saw coming, any read's (`ObservationTicket.willChange`).
  let observedChanges = Atomic<Int>(0)
  // The read whose watch also re-reads when older (`ObservationTicket.fired`): the latest when
  // a re-read that waited, or one a cancelled watch's late call started, began
  // (`coverLatestWatch`).
  let coveredGeneration = Atomic<Int>(-1)
  // The address of the token of the member's own `@Bound` property, reached through a subclass
  // key path (`BoundProbe.inheritedToken`): every set of it is a change, and the read it starts
  // sends what it reads (`ownPropertySet`). 0 when none, or once it died (`tokenEnded`): a new
  // token may have its address.
  private let ownToken: Atomic<UInt>
  // The address of a token of the member's own object (`BoundProbe.objectToken`): while the
  // member observes it, the object's end ends the membership, and no sweep need look at the
  // object (`endsWithItsObject`). 0 when none, once it died, or once a read did not observe it.
  private let objectToken: Atomic<UInt>
  // The queued re-reads (`queuedReread`). Two bytes, before the one-byte fields: a word more
  // here would grow every tracked member.
  private let rereads = QueuedRereads()
  // That property was set since the last read.
  private let ownPropertySet = Atomic<Bool>(false)
  // A set of what the member reads waits for its re-read: what it reads now is newer than
  // what it sent (a join that replaces the member keeps it, `ChainCore.attach`).
  var hasRereadQueued: Bool { rereads.areQueued }
  // Set by the delivering thread while it reads the path back after writing it (an echo).
  @exclusivity(unchecked) var isEchoRead = false

  var member: Member? { state.withLock { $0.member } }
  // A token this source observed ended, or a read inside another one observed what it read:
  // the next read brings the observations up to date, even if it touches what the last one did
  // (a new token may have the address of an ended one).
  private let observationsMoved = Atomic<Bool>(false)
  var observationsMayHaveMoved: Bool { observationsMoved.load(ordering: .acquiring) }
  // One-byte fields together: each between two words takes eight.
  // A read under Observation may have read a value changed before its own watch was armed: the
  // member reads again, after it (`ObservationTicket.observing`). Also when a read touched
  // `@Bound` properties with a watch that counts nothing (chosen from the read before): the read
  // again arms one that counts.
  @exclusivity(unchecked) private var readsAgain = false
  // That read again is for a change seen coming during the read: a set (`queuedReread`).
  @exclusivity(unchecked) private var readsAgainForSet = false
  // The next read sends what it reads even when it is the last value (`rereadOtherwise`).
  @exclusivity(unchecked) private var sendsAnyway = false
  // Reads the member's key path again, through `collect` when `collecting`, or takes the value at
  // `leafValue`; sends the value when it differs from the last one and `sending` is true, as the
  // result of the work the read is when `asResult` (`sendRead`). False when the member's object
  // is gone. Shared by the members a join puts in place of this one (`makeTracked`).
  fileprivate let reread:
    (
      TrackedSource, Member, _ sending: Bool, _ collecting: Bool, _ leafValue: UnsafeRawPointer?,
      _ asResult: Bool
    ) -> Bool
  // The collector of this member's reads: made once (`collect`).
  private let collector = DependencyCollector()
  // Reads nested in another one of this member (a getter set what it had read), counted when
  // they end: the read they were nested in read older values, and sends nothing (`makeTracked`).
  @exclusivity(unchecked) var nestedReads = 0
  // One-byte fields are grouped so that they share words: each between two words took eight.
  // The member's path is @Bound properties one after another (`isPathLeaf`).
  private let isBoundPath: Bool
  // Whether `collector` is in use: a read that begins inside another (a getter that sets what
  // the member reads) makes a collector of its own.
  @exclusivity(unchecked) private(set) var isReading = false
  // The member sends what its read found, and the read is work of its own in the chain's
  // delivery (`read(asResult:)`): the work's result, which goes before what the read's getters
  // changed (`ChainCore.deliver`). A read inside a delivery this thread was making for something
  // else sends as any change made there.
  @exclusivity(unchecked) private(set) var isSendingRead = false
  // The read in progress is a flat `@Observable` property's change in a batch on this thread,
  // read in the chain's turn: what it sends is filtered now and delivered when the batch ends
  // (`readsInBatch`, `ChainCore.deliverReadInBatch`). Taken by that send.
  @exclusivity(unchecked) private var isBatchedRead = false
  // Whether the last read accessed a property of an `@Observable` class. Until one does, reads
  // only watch for one, which allocates nothing (`ObservationTicket.detecting`), and no ticket
  // refers to this source: a weak reference would give it a side table, which slows every
  // retain of it.
  @exclusivity(unchecked) private var readsObservable: Bool
  // The binding probe's watch was adopted (`ObservationTicket.adopt`): the first read, the same
  // as the probe's, arms none of its own.
  @exclusivity(unchecked) private var isWatched = false
  // The first read sends what differs from binding's read (`ChainCore.makeTracked`).
  let sendsFirstRead: Bool
  #if os(Linux)
    // A watch is kept (`State.firedWatch`): read without the lock by reads that access no
    // `@Observable` property, which drop it, and by a flat member's read, which arms none while
    // it is set (`collect`).
    private let keepsWatch = Atomic<Bool>(false)
    // The member is an `@Observable` class's own property (`\.count`, seen changed by its watch):
    // its getter, the macro's, reads that property only, so a kept watch covers every later read
    // (`collect`).
    private let readsFlatObservable = Atomic<Bool>(false)
    // `keep` replaced a watch kept with another read's (`collect`).
    private let keptWatchReplaced = Atomic<Bool>(false)

    var isFlatObservable: Bool { readsFlatObservable.load(ordering: .relaxed) }
  #endif
  // The member's initial sync was written off the chain's delivery, which finishes it in its
  // order (`ChainCore.syncNewMember`): `SyncState`. Until then the member's reads send nothing.
  private let syncState = Atomic<UInt8>(SyncState.done)
  private enum SyncState {
    static let done: UInt8 = 0
    static let awaited: UInt8 = 1
    // What the member reads was set meanwhile, other than by the adding thread's write of it.
    static let changed: UInt8 = 2
  }

  init(
    member: Member, readsObservable: Bool, isBoundPath: Bool, sendsFirstRead: Bool,
    ownToken: BoundToken?, objectToken: BoundToken?,
    reread: @escaping (TrackedSource, Member, Bool, Bool, UnsafeRawPointer?, Bool) -> Bool
  ) {
    state = SpinLocked(State(member: member))
    self.ownToken = Atomic(ownToken.map { UInt(bitPattern: Unretained($0).address) } ?? 0)
    self.objectToken = Atomic(objectToken.map { UInt(bitPattern: Unretained($0).address) } ?? 0)
    self.isBoundPath = isBoundPath
    self.readsObservable = readsObservable
    self.sendsFirstRead = sendsFirstRead
    self.reread = reread
  }

  // Runs `read`, the member's key path, observing every @Bound property and every property of an
  // `@Observable` class it touches, and no longer what it did not touch. Inside the chain's
  // delivery, like every read of the member.
  func collect<Value>(_ read: () -> Value) -> Value {
    #if os(Linux)
      // A flat `@Observable` member whose watch is kept: that watch stays armed, and fires for
      // every change from now on; nothing to collect, and no watch to arm.
      if readsObservable, !isWatched, readsFlatObservable.load(ordering: .relaxed),
        keepsWatch.load(ordering: .relaxed), collector.observed.isEmpty,
        !keptWatchReplaced.exchange(false, ordering: .relaxed)
      {
        return read()
      }
    #endif
    // A read that begins inside another (a getter set what the member reads) collects apart.
    // The collector is a parameter: the member's own is then used without a retain.
    if isReading { return collect(read, into: DependencyCollector(), wasReading: true) }
    return collect(read, into: collector, wasReading: false)
  }

  private func collect<Value>(
    _ read: () -> Value, into collector: DependencyCollector, wasReading: Bool
  ) -> Value {
    // A link now an object of a subclass may be read by an override (`readSubclassObject`).
    let readsBoundOnly = isBoundPath && !self.collector.readSubclassObject
    let nestedBefore = nestedReads
    isReading = true
    defer { isReading = wasReading }
    collector.begin(for: self)
    // Runs `read` with this thread's getters reporting to `collector`.
    func collecting() -> Value { BoundProbe.collect(into: collector, read) }
    var value: Value
    // Whether the watch this read leaves armed counts the changes it sees coming (true when it
    // leaves none).
    var watchCounts = true
    if isWatched {
      isWatched = false
      value = collecting()
      watchCounts = false  // the probe's
    } else if readsObservable {
      let ticket: ObservationTicket?
      let counts = !collector.observed.isEmpty
      (value, ticket) = ObservationTicket.observing(for: self, countsChanges: counts, collecting)
      readsObservable = ticket != nil
      watchCounts = counts || ticket == nil
      if !watchCounts && collector.touchedAny { ticket?.coversNextRead() }
      #if os(Linux)
        cancelKeptWatch(armed: ticket != nil)
      #endif
    } else if readsBoundOnly {
      value = collecting()  // `@Bound` getters only: nothing `@Observable` to look for
      if collector.readSubclassObject {
        // An object of a subclass, whose override may read something else: read again, looking.
        collector.begin(for: self)
        value = looking(collector, &watchCounts, collecting)
      }
    } else {
      value = looking(collector, &watchCounts, collecting)
    }
    // Chosen from the read before: a read that touched `@Bound` properties with a watch that
    // counts nothing reads again, to arm one that counts (`ObservationTicket.observing`).
    if !watchCounts && collector.touchedAny { readsAgain = true }
    // A read nested in this one (its getter set what it had read) observed what it read, after:
    // that stands (`makeTracked`), and the next read brings the collector up to date.
    if nestedReads == nestedBefore { observeWhatWasRead(collector, wasReading: wasReading) }
    collector.end()
    return value
  }

  // The read that `collector` made ended: the member observes what it touched, and no longer
  // what it did not (unless it touched the same as the last read, in order).
  @inline(__always)
  private func observeWhatWasRead(_ collector: DependencyCollector, wasReading: Bool) {
    // Taken first: a read that touched other tokens would otherwise leave it set for the next.
    let moved = observationsMoved.exchange(false, ordering: .acquiring)
    if !collector.touchedTheSame || wasReading || moved {
      observe(collector.takeTokens())
      // Only live tokens' addresses are kept now; a token that dies from here on sets it again.
      collector.addressesMislead.store(false, ordering: .relaxed)
      if wasReading { observationsMoved.store(true, ordering: .releasing) }
    }
  }

  // `collect`'s read that looks for an `@Observable` property, which the last read did not
  // access, and watches it when it finds one.
  @inline(__always)
  private func looking<Value>(
    _ collector: DependencyCollector, _ watchCounts: inout Bool, _ collecting: () -> Value
  ) -> Value {
    let count = observedChanges.load(ordering: .sequentiallyConsistent)
    var (value, accessed) = ObservationTicket.detecting(for: self, collecting)
    if accessed {
      // Read again, watched this time: the first read's watch only fires once, at no cost;
      // it counts a change it sees coming meanwhile, which this read then reads again.
      watchCounts = collector.touchedAny
      collector.begin(for: self)
      (value, _) = ObservationTicket.observing(for: self, countsChanges: watchCounts, collecting)
      readUnderObservation(ended: count)
      readsObservable = true
    }
    #if os(Linux)
      if keepsWatch.load(ordering: .relaxed) { cancelKeptWatch(armed: accessed) }
    #endif
    return value
  }

  // The binding probe's watch is adopted (`ObservationTicket.adopt`), unless it fired before:
  // then the first read looks for `@Observable` properties again, under a watch that counts
  // what it sees coming (`ObservationTicket.detecting`).
  func adoptsWatch(_ adopts: Bool) {
    isWatched = adopts
    if !adopts { readsObservable = false }
  }

  // A read under Observation ended (`ObservationTicket.observing`) that a watch of an older read
  // saw changes coming during, since `count`: the member reads again.
  func readUnderObservation(ended count: Int) {
    if observedChanges.load(ordering: .sequentiallyConsistent) != count {
      readsAgain = true
      readsAgainForSet = true
    }
  }

  #if os(Linux)
    // A watch fired and re-reads: kept armed until a read that began after now has armed its
    // own (`cancelKeptWatch`), so that a change made during the reads until then fires it
    // again. It replaces the one kept, which covers no read this one does not. False when the
    // membership ended: the caller cancels it. No lock is held while a watch is cancelled: its
    // ticket's deinit may take this source's.
    func keep(_ watch: FiredWatch) -> Bool {
      var replaced: FiredWatch?
      let kept = state.withLock { state in
        guard state.member != nil else { return false }
        if state.firedWatch?.generation != watch.generation { replaced = state.firedWatch }
        // Another read's watch: the one replaced may be the only one armed while this one was
        // cancelled meanwhile, by the keeping of that one. The next read arms one.
        if replaced != nil { keptWatchReplaced.store(true, ordering: .relaxed) }
        state.firedWatch = watch
        state.keptSince = readGeneration.load(ordering: .relaxed)
        keepsWatch.store(true, ordering: .relaxed)
        return true
      }
      replaced?.cancel()
      return kept
    }

    // The watch of the read `generation` fired again while it is the one kept: kept as it is.
    // False when another is kept, or none (`keep`).
    func keepsAgain(_ generation: Int) -> Bool {
      state.withLock { state in
        guard state.member != nil, state.firedWatch?.generation == generation else {
          return false
        }
        state.keptSince = readGeneration.load(ordering: .relaxed)
        return true
      }
    }

    // A read ended that `armed` a watch of its own, or accessed no `@Observable` property:
    // the watch kept is cancelled, unless it fired after that read began (its own re-read
    // cancels it).
    private func cancelKeptWatch(armed: Bool) {
      let generation = readGeneration.load(ordering: .relaxed)
      let kept = state.withLock { state -> FiredWatch? in
        guard let kept = state.firedWatch, !armed || state.keptSince < generation else {
          return nil
        }
        state.firedWatch = nil
        keepsWatch.store(false, ordering: .relaxed)
        return kept
      }
      kept?.cancel()
    }
  #endif

  // Observes `tokens` (alive: the caller holds them) and stops observing the rest. Lock order:
  // this source's lock, then a token's. A token in `dependencies` may be in its deinit, waiting
  // in `tokenEnded` for this lock: it is compared by address and used without a retain.
  private func observe(_ tokens: ContiguousArray<Unretained<BoundToken>>) {
    state.withLock { state in
      guard state.member != nil else { return }
      // Its object's token not read, its address may be another's once it dies: forgotten.
      let object = objectToken.load(ordering: .relaxed)
      if object != 0, !tokens.contains(where: { UInt(bitPattern: $0.address) == object }) {
        objectToken.store(0, ordering: .relaxed)
      }
      if state.dependencies == tokens { return }  // the same properties as last time
      for index in state.dependencies.indices where !tokens.contains(state.dependencies[index]) {
        state.dependencies[index].with { $0.removeObserver(self) }
      }
      for index in tokens.indices where !state.dependencies.contains(tokens[index]) {
        tokens[index].with { $0.addObserver(self) }
      }
      state.dependencies.replaceContents(with: tokens)
    }
  }

  // The read in progress reached `token` (alive: the collector holds it): observe it now. The
  // read's `observe` keeps it, or stops observing it when the read did not use it after all.
  func observeNow(_ token: Unretained<BoundToken>) {
    state.withLock { state in
      guard state.member != nil, !state.dependencies.contains(token) else { return }
      token.with { $0.addObserver(self) }
      state.dependencies.append(token)
    }
  }

  // The membership ended: stop observing. Registry lock held; takes token locks only.
  // The member is released by the registry's caller, after unlocking: the registry still holds it.
  func end() {
    state.withLock { state in
      state.member = nil
      for dependency in state.dependencies {
        dependency.with { $0.removeObserver(self) }
      }
      state.dependencies = []
    }
  }

  // One of the observed properties was set, on this thread: `token`'s, when the caller knows,
  // and to the value at `value` when it is no member (`BoundToken.setAsNoMember`).
  func dependencyChanged(_ token: BoundToken? = nil, setTo value: UnsafeRawPointer? = nil) {
    guard let member, member.isAttached else { return }
    // In a batch on this thread: re-read once, when it ends (Batch.swift); but the chain's own
    // write of the member, on this thread, is read back when it returns (`reread`).
    if openBatches.load(ordering: .relaxed) > 0, let batch = Batch.openHere,
      !(member.isWriting && member.chain.isDeliveringHere)
    {
      return batch.with { $0.reread(self) }
    }
    rereadInTurn(member, token, value)
  }

  #if os(Linux)
    // A watch fired for a change of `tracking`'s property, on this thread.
    func observableChanged(_ tracking: ObservationTracking) {
      if !readsFlatObservable.load(ordering: .relaxed), let member,
        tracking.changed == member.access.keyPath
      {
        readsFlatObservable.store(true, ordering: .relaxed)
      }
      if openBatches.load(ordering: .relaxed) > 0, Batch.openHere != nil, readsInBatch(tracking) {
        return
      }
      dependencyChanged()
    }

    // In a batch on this thread, a change of the member's own property, a flat `@Observable`
    // one (`\.count`), is read now, in the chain's turn, and filtered at once, as a `@Bound`
    // property's set is; the chain delivers when the batch ends (Docs/Semantics.md, "Batches").
    // False when it waits for the batch's end, as any other tracked member's change: the chain
    // delivers elsewhere, on another actor, or on this thread already.
    @inline(never)
    private func readsInBatch(_ tracking: ObservationTracking) -> Bool {
      guard let member, member.isAttached,
        syncState.load(ordering: .acquiring) == SyncState.done,
        tracking.changed == member.access.keyPath
      else { return false }
      let chain = member.chain
      switch chain.beginOwnWork(for: member) {
      case .begun:
        isBatchedRead = true
        read(member, sending: true)
        isBatchedRead = false
        chain.endOwnWork()
        return true
      case .begunAfterDrain:
        chain.endOwnWork()
        return false
      case .insideDelivery, .elsewhere:
        return false
      }
    }
  #endif

  // What the read in progress sends is filtered now and delivered when the batch ends
  // (`isBatchedRead`). In the chain's turn.
  func takesBatchedRead() -> Bool {
    defer { isBatchedRead = false }
    return isBatchedRead
  }

  @inline(__always)
  private func rereadInTurn(_ member: Member, _ token: BoundToken?, _ value: UnsafeRawPointer?) {
    // The re-read is part of the chain's delivery: one at a time with its other changes, so the
    // last value delivered is read after the last change (Docs/Semantics.md, "Threading").
    // Re-reads waiting for this member merge into one.
    let chain = member.chain
    switch chain.beginOwnWork(for: member) {
    case .begun:
      rereadInDelivery(member, token, value, isDeliveringHere: false)
      chain.endOwnWork()
    case .insideDelivery:
      // Here and when the work waits (`rereadOtherwise`), not in a set's own turn: a sync
      // written off the delivery awaits its end while another thread delivers.
      if _slowPath(syncState.load(ordering: .relaxed) != SyncState.done) {
        noteChangeBeforeSync(member)
      }
      rereadInDelivery(member, token, value, isDeliveringHere: true)
    case let work:
      rereadOtherwise(work, member, token, value)
    }
  }

  // Sends what the member's read found, the value at `value` (`isSendingRead`).
  @inline(__always)
  func sendRead(_ value: UnsafeRawPointer, _ member: Member, asResult: Bool) {
    let wasSending = isSendingRead
    isSendingRead = asResult
    // Called in place: a copy of the thunk would retain its context.
    Unretained(member.access).with { $0.send?(nil, value, member) }
    isSendingRead = wasSending
  }

  // `token` set to the value at `value`, when known (`dependencyChanged`).
  @inline(__always)
  private func rereadInDelivery(
    _ member: Member, _ token: BoundToken?, _ value: UnsafeRawPointer?, isDeliveringHere: Bool
  ) {
    if let token, isPathLeaf(token, member, isDeliveringHere: isDeliveringHere) {
      read(
        member, sending: true, collecting: false, leafValue: value, asResult: !isDeliveringHere)
    } else {
      noteSet(of: token)
      reread(member, isDeliveringHere)
    }
  }

  // The re-read's cases that are not the common ones (`dependencyChanged`).
  @inline(never)
  private func rereadOtherwise(
    _ work: AnyChain.OwnWork, _ member: Member, _ token: BoundToken?, _ value: UnsafeRawPointer?
  ) {
    noteSet(of: token)  // before the re-read is queued: it may merge into one waiting
    if syncState.load(ordering: .relaxed) != SyncState.done { noteChangeBeforeSync(member) }
    rereads.noteSet()
    let chain = member.chain
    if work == .begunAfterDrain {
      // What was queued for the chain's actor was delivered first, without writing the member
      // (`beginOwnWorkOtherwise`): what it holds now is sent when it is not the chain's value
      // (as an echo is, `ChainCore.enqueue`), even when it is the last value read. So the chain
      // takes the member's newer value, and a value the member sent during the drain is not
      // sent twice.
      sendsAnyway = true
      isEchoRead = true
      read(member, sending: true)
      isEchoRead = false
      sendsAnyway = false
      return chain.endOwnWork()
    }
    // The chain's own write of a member added from nonisolated code (`ChainCore.syncNewMember`):
    // its echo is read back in the chain's order, not queued for its actor, where it came back
    // as a change. Written off the delivery, the re-read goes before the sync's end, in the
    // chain's queue (it sends nothing, `syncState`); written by this thread delivering the
    // chain off its actor, it is read back now, as on the actor.
    var toActor = true
    if member.isSyncedHere && member.isWriting {
      toActor = false
    } else if chain.isDeliveringHere && member.isWriting {
      return rereadInDelivery(member, token, value, isDeliveringHere: true)
    }
    chain.serialize(
      toActor: toActor, workKey: .reread(of: member),
      now: {
        coverLatestWatch()
        rereadInDelivery(member, token, value, isDeliveringHere: $0)
      },
      later: { queuedReread(member, forSet: true) })
  }

  // `token` was set: when it is the member's own property's, the next read sends.
  private func noteSet(of token: BoundToken?) {
    let own = ownToken.load(ordering: .relaxed)
    guard own != 0, let token, UInt(bitPattern: Unretained(token).address) == own else { return }
    ownPropertySet.store(true, ordering: .releasing)
  }

  // The re-read to queue for `member` where none waits (one waiting is moved last instead,
  // `PendingKey.reread`). While it waits it counts as a change of the member's own, which
  // deliveries before it do not write over (Docs/Semantics.md, "Threading"). After a set made
  // while another ran or was taken out to run, which may have read that set early (queued for it,
  // or the first to begin since), it sends what it reads unless the chain holds it
  // (Docs/Semantics.md, "Tracked sources").
  private func queuedReread(_ member: Member, forSet: Bool) -> () -> Void {
    let follows = rereads.queue() && forSet
    member.pendingChanges.add(1, ordering: .relaxed)
    return {
      let followsSet = self.rereads.begin() || follows
      member.pendingChanges.subtract(1, ordering: .relaxed)
      // Where a test sets what the member reads before the read begins (InterleavingTests).
      SchedulePoint.reach()
      self.coverLatestWatch()
      if followsSet { self.readBack(member, asResult: true) } else { self.reread(member, false) }
      self.rereads.end()
    }
  }

  // Whether `token`, just set, is the last property of the member's path, which is @Bound
  // properties one after another (`\.a.b.c`), each read through an object of its declaring
  // class (a subclass's override may read more): then its new value is the member's. Only when
  // nothing else changed since the last read (a link's re-read may wait), and not for the
  // chain's own write (an echo, `reread`). Inside the chain's delivery.
  private func isPathLeaf(_ token: BoundToken, _ member: Member, isDeliveringHere: Bool) -> Bool {
    guard isBoundPath, !isReading, !collector.readSubclassObject else { return false }
    return !(isDeliveringHere && member.isWriting)
      && !hasRereadQueued
      && !observationsMoved.load(ordering: .acquiring)
      && collector.observed.last?.refers(to: token) == true
  }

  private func reread(_ member: Member, _ isDeliveringHere: Bool) {
    // The chain writing through the member's own path, on this thread: its notifications are not
    // a change (no echo). A setter may set several properties: the path is read back once the
    // write returns (`readBack`). The same property set meanwhile by another thread is a change
    // (Docs/Semantics.md, "Re-entrancy").
    if isDeliveringHere && member.isWriting {
      holdEcho(of: member)
    } else {
      read(member, sending: true, asResult: !isDeliveringHere)
    }
  }

  // Held for the writer to read back, unless a new member's sync is written by the thread that
  // added it (`syncState`): the delivering thread is not the one writing it then.
  @inline(never)
  private func holdEcho(of member: Member) {
    if syncState.load(ordering: .acquiring) != SyncState.done {
      return read(member, sending: true)
    }
    member.holdEcho()
  }

  // The chain's write of the member returned: the value and the properties read are refreshed,
  // and the value is sent only when it is not what the delivery wrote (a setter that corrects
  // it; another thread may have changed the path since: ChainCore.enqueue). In the delivery.
  func readBack(_ member: Member, asResult: Bool = false) {
    // Sent even when it is the last value read (a setter that corrects the write back to it):
    // `ChainCore.enqueue` drops it when it is the chain's value.
    sendsAnyway = true
    isEchoRead = true
    read(member, sending: true, asResult: asResult)
    isEchoRead = false
    sendsAnyway = false
  }

  // Reads the member's key path again, observing what it reads (unless `collecting` is false:
  // `isPathLeaf`, which may give the value read, `leafValue`); sends the value when it differs
  // from the last one and `sending`. Inside the chain's delivery. `asResult`: the read is work of
  // its own in the delivery (`isSendingRead`).
  func read(
    _ member: Member, sending: Bool, collecting: Bool = true, leafValue: UnsafeRawPointer? = nil,
    asResult: Bool = false
  ) {
    guard member.isAttached else { return }
    let sending = sending && syncState.load(ordering: .acquiring) == SyncState.done
    if !reread(self, member, sending, collecting, leafValue, asResult) {
      // The member's own object is gone: so is its membership (Docs/Semantics.md, "Lifetime").
      if member.object == nil { member.chain.registry.detach(member) }
    }
    if readsAgain { readAgainLater(member) }
  }

  // Queued, not at once: another thread that keeps changing what the member reads holds no read.
  // Not when a re-read waits: that one reads after this read anyway, and only a change moves it.
  @inline(never)
  private func readAgainLater(_ member: Member) {
    let forSet = readsAgainForSet
    readsAgain = false
    readsAgainForSet = false
    member.chain.queueWork(unlessWaiting: .reread(of: member)) {
      queuedReread(member, forSet: forSet)
    }
  }

  // A re-read that waited begins, or one a cancelled watch's late call starts: the latest read's
  // watch covers it until it has armed its own. The re-read may have been asked for by a watch
  // that fired before the latest read's was made (a second firing while that read was about to
  // begin), and the latest read's watch may not have fired: a change made while this one reads,
  // before its own watch is armed, fires only that watch, which re-reads then. Only these,
  // which races make: when each read follows its watch's firing, older watches re-reading
  // would multiply the reads.
  func coverLatestWatch() {
    coveredGeneration.store(
      readGeneration.load(ordering: .relaxed), ordering: .sequentiallyConsistent)
    // Ordered before the read's loads of what it reads: a set after it finds the store.
    atomicMemoryFence(ordering: .sequentiallyConsistent)
  }

  // The next read sends what it reads (`Member.setWhileCompared`). In the delivery.
  func sendNextRead() { sendsAnyway = true }

  // Whether this read sends what it reads anyway; the reads nested in it compare.
  func takeSendsAnyway() -> Bool {
    defer { sendsAnyway = false }
    // Taken whatever `sendsAnyway` says: left set, it would make a later read send.
    let ownSet =
      ownToken.load(ordering: .relaxed) != 0
      && ownPropertySet.exchange(false, ordering: .acquiring)
    return sendsAnyway || ownSet
  }

  // The member's initial sync is written off the delivery (`syncState`), or finished in it:
  // whether what it reads was set meanwhile.
  func syncWrittenElsewhere() { syncState.store(SyncState.awaited, ordering: .releasing) }
  @discardableResult
  func syncFinished() -> Bool {
    syncState.exchange(SyncState.done, ordering: .acquiringAndReleasing) == SyncState.changed
  }

  // A set of what the member reads before its sync is finished, unless the adding thread's write
  // of it: the member's newest value, which the sync's end keeps (`ChainCore.finishSync`).
  @inline(never)
  private func noteChangeBeforeSync(_ member: Member) {
    guard !(member.isSyncedHere && member.isWriting) else { return }
    _ = syncState.compareExchange(
      expected: SyncState.awaited, desired: SyncState.changed, ordering: .acquiringAndReleasing)
  }

  // An observed token is being deallocated, with its object. When that object was the member's
  // own, the membership ends with it (Docs/Semantics.md, "Lifetime").
  func tokenEnded(_ token: BoundToken) {
    let address = UInt(bitPattern: Unretained(token).address)
    // The member's own object is dying: its membership ends here first. Once the member no
    // longer looks like one that ends with its object, a sweep on another thread may end it,
    // and release its chain's sinks there, a moment later.
    if objectToken.load(ordering: .relaxed) == address { endIfObjectGone() }
    _ = ownToken.compareExchange(expected: address, desired: 0, ordering: .relaxed)
    _ = objectToken.compareExchange(expected: address, desired: 0, ordering: .relaxed)
    state.withLock { state in state.dependencies.removeAll { $0.refers(to: token) } }
    observationsMoved.store(true, ordering: .releasing)
    collector.addressesMislead.store(true, ordering: .releasing)
    SchedulePoint.reach()
    endIfObjectGone()
  }

  // Whether the member observes a token of its own object, which tells it when the object is
  // gone: then its membership needs no sweep, whose weak load of the object could make another
  // thread's release of it run the deinit on the sweeping thread, later (Registry.swift). Also,
  // when `orUnread`, while it observes nothing yet: its first read, to come, ends it then.
  func endsWithItsObject(orUnread: Bool) -> Bool {
    let token = objectToken.load(ordering: .relaxed)
    guard token != 0 else { return false }
    return state.withLock { state in
      (orUnread && state.dependencies.isEmpty)
        || state.dependencies.contains { UInt(bitPattern: $0.address) == token }
    }
  }

  // Something the member observed went with its object: when the member's own object is gone
  // too, so is the membership (Docs/Semantics.md, "Lifetime").
  func endIfObjectGone() {
    // None: the membership ended, after its chain (`Registry.Tables.detach`).
    guard let member else { return }
    // Not skipped when it looks detached: a sweep on another thread may be ending it, and the
    // registry's lock waits for that, so that its chain has ended when this returns.
    if member.object == nil { member.chain.registry.detach(member) }
  }
}

// A tracked member's queued re-reads (`TrackedSource.queuedReread`), in one atomic word of two
// bytes: how many are queued and not begun (bits 0-6: at most one waits in the chain's queue,
// one for its actor, one taken out to run), how many run (bits 8-13: one at a time, in the
// delivery), and whether a set was made while one ran (bit 15), for the next one to begin.
struct QueuedRereads: ~Copyable, Sendable {
  private let word = Atomic<UInt16>(0)
  private static let oneRunning: UInt16 = 0x100
  private static let setWhileRunning: UInt16 = 0x8000

  var areQueued: Bool { word.load(ordering: .acquiring) & 0x7F != 0 }

  // One more is queued. Whether another was queued or running then.
  func queue() -> Bool {
    word.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue & ~Self.setWhileRunning != 0
  }

  // A queued one begins, and takes the mark, in one step: a set made while it runs marks the
  // next. Whether a set was made while another ran, since the last began.
  func begin() -> Bool {
    var old = word.load(ordering: .relaxed)
    while true {
      let new = (old & ~Self.setWhileRunning) &+ Self.oneRunning &- 1
      let (exchanged, found) = word.weakCompareExchange(
        expected: old, desired: new, ordering: .acquiringAndReleasing)
      if exchanged { return old & Self.setWhileRunning != 0 }
      old = found
    }
  }

  func end() { word.wrappingSubtract(Self.oneRunning, ordering: .acquiringAndReleasing) }

  // A set of what the member reads: noted when one runs.
  func noteSet() {
    guard word.load(ordering: .acquiring) & 0x3F00 != 0 else { return }
    word.bitwiseOr(Self.setWhileRunning, ordering: .acquiringAndReleasing)
  }
}

// The tracked members observing a token, in the order they began to: most often one, kept
// without a list, so that observing a property and no longer observing it (a replaced link)
// allocates and copies nothing. One word, like the list alone.
enum TokenObservers {
  case none
  case one(TrackedSource)
  case many(ContiguousArray<TrackedSource>)

  var count: Int {
    switch self {
    case .none: 0
    case .one: 1
    case .many(let list): list.count
    }
  }

  // The observer, when there is exactly one.
  var only: TrackedSource? {
    if case .one(let source) = self { return source }
    return nil
  }

  mutating func append(_ source: TrackedSource) {
    switch self {
    case .none: self = .one(source)
    case .one(let first): self = .many([first, source])
    case .many(var list):
      self = .none  // the list, unshared, grows in place
      list.append(source)
      self = .many(list)
    }
  }

  // Returns `source` when it was there, for the caller to release once it holds no lock.
  mutating func remove(_ source: TrackedSource) -> TrackedSource? {
    switch self {
    case .none: return nil
    case .one(let first):
      guard first === source else { return nil }
      self = .none
      return first
    case .many(var list):
      guard let index = list.firstIndex(where: { $0 === source }) else { return nil }
      self = .none
      let removed = list.remove(at: index)
      self = list.count == 1 ? .one(list[0]) : .many(list)
      return removed
    }
  }

  func forEach(_ body: (TrackedSource) -> Void) {
    switch self {
    case .none: break
    case .one(let source): body(source)
    case .many(let list): for source in list { body(source) }
    }
  }
}

extension BoundToken {
  func addObserver(_ source: TrackedSource) {
    let held = acquire()
    let count = held.updateObservers { observers in
      observers.append(source)
      return observers.count
    }
    observerCount.store(Int32(count), ordering: .relaxed)
    release(held)
  }

  func removeObserver(_ source: TrackedSource) {
    let held = acquire()
    var removed: TrackedSource?
    let count = held.updateObservers { observers in
      removed = observers.remove(source)
      return observers.count
    }
    observerCount.store(Int32(count), ordering: .relaxed)
    release(held)
    withExtendedLifetime(removed) {}
  }

  // The property, which is no member, was set to `newValue`: a tracked member whose path ends
  // with it takes the value without reading its path (`TrackedSource.dependencyChanged`). Out of
  // line, so that every setter's code stays small, but specialized: a generic `Value` here made
  // every leaf's set copy it through run-time metadata.
  @inlinable
  @inline(never)
  func setAsNoMember<Value>(_ newValue: Value) {
    guard observerCount.load(ordering: .relaxed) != 0 else { return }
    withUnsafePointer(to: newValue) { notifyObservers(setTo: $0) }
  }

  // The value at `value` was set; see `setAsNoMember`.
  @usableFromInline
  @inline(never)
  func notifyObservers(setTo value: UnsafeRawPointer) {
    let held = acquire()
    if let only = held.onlyObserver {
      release(held)
      return only.dependencyChanged(self, setTo: value)
    }
    let current = held.observers
    release(held)
    current.forEach { $0.dependencyChanged(self, setTo: value) }
  }

  // Out of line: a set of a property no tracked member observes pays one relaxed load.
  @usableFromInline
  @inline(never)
  func notifyObservers() {
    let held = acquire()
    // Most properties have one observer: it is taken alone, without copying the list.
    if let only = held.onlyObserver {
      release(held)
      return only.dependencyChanged(self)
    }
    let current = held.observers
    release(held)
    current.forEach { $0.dependencyChanged(self) }
  }

  func observersEnded() {
    let held = acquire()
    let current = held.updateObservers { observers in
      defer { observers = .none }
      return observers
    }
    observerCount.store(0, ordering: .relaxed)
    release(held)
    SchedulePoint.reach()
    current.forEach { $0.tokenEnded(self) }
  }
}

extension ChainCore {
  // Makes `member` a tracked member of `object`, reading its key path through `read`, before it
  // is attached: a thread that detaches it meanwhile ends its source (`Member.markDetached`).
  // `startTracking` begins it once attached.
  //
  // `firstRead` is what binding read: a dependency that changed since is a change, sent by the
  // first re-read (made in the chain's delivery order; only for `Equatable` values, where a
  // change can be told from a read of the same value), unless the member `receivesFirstValue`:
  // then the chain's value overwrites it (Docs/Semantics.md, "Initial sync"), and what the
  // first read finds is the member's old value or that write. `watch` (see `startTracking`): that read
  // accessed a property of an `@Observable` class (binding looks for one only when the read
  // touched no `@Bound` property; otherwise the member's first read does). `isBoundPath`: the
  // key path is @Bound properties one after another. `previous`: the member a join replaces.
  func makeTracked<Object: AnyObject, Target>(
    _ member: Member, of object: Object, reading read: @escaping (Object) -> Target,
    comparing isEqual: @escaping (UnsafeRawPointer, UnsafeRawPointer) -> Bool, firstRead: Any?,
    watch: ObservationTicket?, isBoundPath: Bool, receivesFirstValue: Bool,
    ownToken: BoundToken?, objectToken: BoundToken?, replacing previous: TrackedSource?
  ) {
    // A join: the property's last value read stays the one its replaced member read, not what
    // binding read, so that a change the replaced member had yet to send (its re-read on its way
    // or dropped with it, or never made while its own first read waited) is sent, and one it sent
    // is not sent again. A set the replaced member was told of is stored before this member's
    // first read, which comes after the join.
    if let previous {
      member.tracked = TrackedSource(
        member: member, readsObservable: watch != nil, isBoundPath: isBoundPath,
        sendsFirstRead: previous.sendsFirstRead, ownToken: ownToken, objectToken: objectToken,
        reread: previous.reread)
      return
    }
    // Cast here, not by the caller: naming `Target?` there made every binding look up its
    // metadata (about 300 instructions). A tracked member's probe always kept what it read.
    let firstRead = firstRead as? Target ?? read(object)
    let last = LastRead(firstRead, comparing: isEqual)
    // Reads, compares with the last value, keeps the value, and sends it when it differs (or, read
    // anew, the source `sendsAnyway`) and `sending`. The old value's deinit and `==` are user
    // code: no lock is held here.
    let reread = {
      (
        source: TrackedSource, member: Member, sending: Bool, collecting: Bool,
        leafValue: UnsafeRawPointer?, asResult: Bool
      ) -> Bool in
      if let leafValue {
        if last.replace(with: leafValue) && sending {
          source.sendRead(leafValue, member, asResult: asResult)
        }
        return true
      }
      guard let found = member.object else { return false }
      let object = unsafeDowncast(found, to: Object.self)
      // Taken before the read: a read nested in it (its getter sets what it reads) compares.
      let anyway = source.takeSendsAnyway()
      let isNested = source.isReading
      let nested = source.nestedReads
      let value = collecting ? source.collect { read(object) } : read(object)
      // A read nested in this one read after the getter's set: its value is the newer.
      guard source.nestedReads == nested else { return true }
      withUnsafePointer(to: value) { value in
        if last.replace(with: value) || anyway, sending {
          source.sendRead(value, member, asResult: asResult)
        }
      }
      if isNested { source.nestedReads &+= 1 }
      return true
    }
    member.tracked = TrackedSource(
      member: member, readsObservable: watch != nil, isBoundPath: isBoundPath,
      sendsFirstRead: last.isEquatable && !receivesFirstValue, ownToken: ownToken,
      objectToken: objectToken,
      reread: reread)
  }

  // Begins tracking `member`, attached: adopts the binding's `watch`, if any, and reads the key
  // path once more to collect what it observes (the probe's read may have left a token in place
  // that an undone install replaced).
  // `joined`: the member replaces one of the same property (a join), whose sets are changes of
  // the chain's already: its first read sends what was set since the join's own read, in the
  // chain's order (on its actor too). `rereads`: the re-read of a set before the join waited,
  // and went with the member replaced: the first read sends what it reads unless it is the
  // chain's value, as that re-read would have.
  func startTracking(
    _ member: Member, adopting watch: ObservationTicket?, joined: Bool, rereads: Bool
  ) {
    guard let source = member.tracked else { return }
    // A set may fire the probe's watch right here, before it is adopted (InterleavingTests).
    SchedulePoint.reach()
    watch?.adopt(by: source)
    serialize(toActor: joined, workKey: .firstRead(of: member)) {
      if rereads { return source.readBack(member) }
      source.read(member, sending: joined || source.sendsFirstRead)
    }
  }
}

// The value a tracked member read last (`ChainCore.makeTracked`), kept at an address of its own: a
// new value, read or set (a path's leaf), is compared with it (by the member's specialized
// `MemberThunks.isEqual`) and copied over it in place. The re-read that uses it is generic code
// that is not specialized (it is made when binding, inside ChainBind): a `Target?` there looks up
// its metadata (about 300 instructions per read), and a `withUnsafePointer` costs about 100.
// Touched only by the member's reads, one at a time inside the chain's delivery.
//
// @unchecked Sendable: see above. `storage` is initialized from `init` to `deinit`.
final class LastRead<Value>: @unchecked Sendable {
  private let storage: UnsafeMutablePointer<Value>
  // `Value`'s `==`; nil when `Value` is not `Equatable`: then every read is a change.
  private let isEqual: ((UnsafeRawPointer, UnsafeRawPointer) -> Bool)?

  init(_ value: Value, comparing isEqual: @escaping (UnsafeRawPointer, UnsafeRawPointer) -> Bool) {
    storage = .allocate(capacity: 1)
    storage.initialize(to: value)
    self.isEqual = Value.self is any Equatable.Type ? isEqual : nil
  }

  deinit {
    storage.deinitialize(count: 1)
    storage.deallocate()
  }

  var isEquatable: Bool { isEqual != nil }

  // Keeps the `Value` at `value`; returns whether it differs from the one kept. The old value's
  // deinit and `==` are user code: no lock is held here.
  func replace(with value: UnsafeRawPointer) -> Bool {
    // Called in place: `if let` would copy the closure, retaining its context.
    let changed = !(isEqual?(UnsafeRawPointer(storage), value) ?? false)
    storage.pointee = value.assumingMemoryBound(to: Value.self).pointee
    return changed
  }
}

// Properties of `@Observable` classes read by a tracked member's key path (Docs/Semantics.md,
// "Tracked sources"). Observation keeps the callback of a read, and so its ticket, only when the
// read accessed an observable property: whether the ticket is still shared after the read tells
// whether there was one. On Linux the toolchain's `withObservationTracking(_:didSet:)` calls back
// synchronously, after the new value is stored, and stays armed until the tracking it passes is
// cancelled. Elsewhere only the public will-change callback exists: the re-read runs after it,
// in a task.
//
// A probe's read arms a watch before its member has a source: the source adopts it (`adopt`), so
// that a member from an `@Observable` property is watched once, not twice.
//
// @unchecked Sendable: `owner` lives in its lock; `isArmed` is set before the ticket is shared.
final class ObservationTicket: @unchecked Sendable {
  fileprivate struct Owner {
    weak var source: TrackedSource?
    // The source's read that armed it (`fired`).
    var generation = 0
    // It fired while no source had adopted it.
    var firedUnowned = false
    // Once its read is no longer the latest, its next firing still re-reads (`fired`).
    var rereadsWhenOlder = false
    // Cancelled by the source (`FiredWatch.cancel`): a call Observation chose before that
    // re-reads once more, and it ends.
    var isCancelled = false
    // Ended: a call after it (Observation may call a watch cancelled while it was being
    // installed) tells nothing.
    var isEnded = false
  }

  fileprivate let owner: SpinLocked<Owner>
  // Observation holds the watch, and so this ticket. Set by the arming thread while it holds
  // the ticket; read by the deinit only.
  @exclusivity(unchecked) private var isArmed = false

  init(source: TrackedSource?) {
    let generation = source?.readGeneration.wrappingAdd(1, ordering: .relaxed).newValue ?? 0
    owner = SpinLocked(Owner(source: source, generation: generation))
  }

  // The watch fired: the source to tell, when this ticket belongs to its latest read, or is
  // one of an older read that still covers a later read (`rereadsWhenOlder`, or the read
  // before a re-read that waited or that a cancelled watch's late call started,
  // `TrackedSource.coverLatestWatch`): that read may have read
  // the property before the change, and its own watch be armed after it. Any other
  // older read's watch only cancels itself: the latest read's watch, or its count of changes
  // (`TrackedSource.collect`), has the change.
  // `keeps`: it is kept armed (Linux, `TrackedSource.keep`), as the watch of the read
  // `generation`; any other is cancelled, and ends.
  private func fired() -> (TrackedSource?, keeps: Bool, generation: Int) {
    owner.withLock { owner in
      guard !owner.isEnded else { return (nil, false, 0) }
      guard let source = owner.source else {
        owner.firedUnowned = true
        owner.isEnded = true
        return (nil, false, 0)
      }
      // Chosen by Observation before the source cancelled it: the change may be one the read
      // that armed the newer watch missed.
      if owner.isCancelled {
        owner.isEnded = true
        return (source, false, 0)
      }
      let isLatest = source.readGeneration.load(ordering: .relaxed) == owner.generation
      guard
        isLatest || owner.rereadsWhenOlder
          || source.coveredGeneration.load(ordering: .sequentiallyConsistent) == owner.generation
      else {
        owner.isEnded = true
        return (nil, false, 0)
      }
      // Kept: its next firing is during the re-read this one starts, or after it.
      owner.rereadsWhenOlder = true
      return (source, true, owner.generation)
    }
  }

  // It fired before a source adopted it (`adopt`).
  var firedUnadopted: Bool { owner.withLock { $0.firedUnowned } }

  // A property the watch observes is about to change, before its new value is stored. While
  // its read is the latest, a read that begins before the change is stored counts it too late:
  // the watch then re-reads when it fires.
  private func willChange() {
    let source = owner.withLock { owner in
      if let source = owner.source,
        source.readGeneration.load(ordering: .relaxed) == owner.generation
      {
        owner.rereadsWhenOlder = true
      }
      return owner.source
    }
    source?.observedChanges.add(1, ordering: .sequentiallyConsistent)
  }

  // The read that armed it touched `@Bound` properties, and it counts no change: the read
  // after it, which arms one that does, is covered by it (`fired`).
  func coversNextRead() {
    owner.withLock { $0.rereadsWhenOlder = true }
  }

  // A probe's watch becomes `source`'s latest read's (`TrackedSource.isWatched`), unless it
  // fired before: then the source's first read arms a watch of its own.
  func adopt(by source: TrackedSource) {
    owner.withLock { owner in
      // Set before the source is published: a firing from now on reads it, in the delivery.
      source.adoptsWatch(!owner.firedUnowned)
      owner.source = source
      owner.generation = source.readGeneration.wrappingAdd(1, ordering: .relaxed).newValue
      // It counts no change: the reads after the first, made without a watch, are covered by it.
      owner.rereadsWhenOlder = !owner.firedUnowned
    }
  }

  // Runs `read`, observing the `@Observable` properties it accesses for `source`; returns what
  // it read, and the ticket when it accessed any.
  //
  // `countsChanges`, for a member that reads `@Bound` properties too: a read a `@Bound` change
  // made leaves the last read's watch armed. A change it sees coming while this read runs may
  // have been read before this read's own watch is armed, which then misses it: the member reads
  // again. (Observation arms a watch, and lists those a change fires, under its registrar's lock;
  // `willChange` counts before the change is stored.) Counting costs Observation's will-set
  // callbacks: a member that reads only `@Observable` properties re-reads when its watch fired,
  // cancelled, and has no other.
  static func observing<Value>(
    for source: TrackedSource?, countsChanges: Bool = false, _ read: () -> Value
  ) -> (Value, ObservationTicket?) {
    // Loaded before the read becomes the latest: a change the last read's watch sees coming
    // from then on is counted, or makes that watch re-read (`willChange`).
    let count =
      countsChanges ? source?.observedChanges.load(ordering: .sequentiallyConsistent) : nil
    var ticket = ObservationTicket(source: source)
    let value = arm(ticket, countsChanges: countsChanges, read)
    if let count { source?.readUnderObservation(ended: count) }
    // Where a test changes the property between the arming and the check.
    SchedulePoint.reach()
    // Observation keeps the watch, and so the ticket, when the read accessed a property; a
    // change made since may have fired it and let it go already (a member bound as another
    // thread sets the property).
    if isKnownUniquelyReferenced(&ticket) && !ticket.firedUnadopted { return (value, nil) }
    ticket.isArmed = true
    return (value, ticket)
  }

  // Runs `read` with Observation collecting what it accesses, to tell only whether it accessed a
  // property of an `@Observable` class. Allocates nothing when it did not; when it did, it leaves
  // a watch that does nothing and goes at the first change (Observation's public one-shot form).
  static func detecting<Value>(
    for source: TrackedSource, _ read: () -> Value
  ) -> (Value, accessed: Bool) {
    var accessed = false
    let value = withObservationTracking(read, onChange: noted(&accessed, source))
    return (value, accessed)
  }

  // Made only when the read accessed a property: counts the change it sees coming
  // (`TrackedSource.collect`).
  private static func noted(
    _ accessed: inout Bool, _ source: TrackedSource
  ) -> @Sendable () -> Void {
    accessed = true
    return { [weak source] in
      source?.observedChanges.add(1, ordering: .sequentiallyConsistent)
    }
  }

  // Observation let the watch go: it fired and was cancelled, or every object it watched was
  // deallocated, since a registrar drops its watches with its object (the only end of an
  // `@Observable` object that can be seen from outside it: Docs/Architecture.md, "When a chain
  // ends"). Then the member whose own object is gone ends at once. Runs inside the registrar's
  // teardown, under its lock, but with no ChainBind lock held.
  deinit {
    guard isArmed, let source = owner.withLock({ $0.source }) else { return }
    source.endIfObjectGone()
  }

  #if os(Linux)
    private static func arm<Value>(
      _ ticket: ObservationTicket, countsChanges: Bool, _ read: () -> Value
    ) -> Value {
      let didSet = { @Sendable [ticket] (tracking: ObservationTracking) in
        // A watch that re-reads stays armed until a later read has armed its own
        // (`TrackedSource.keep`); any other is cancelled (`fired`).
        // Where a test holds a thread between Observation's choice of this watch and this call.
        SchedulePoint.reach()
        let (source, keeps, generation) = ticket.fired()
        guard let source else { return tracking.cancel() }
        if keeps {
          // Where a test holds a thread between the choice to keep this watch and its keeping,
          // for the member that reads without arming a watch (`TrackedSource.isFlatObservable`).
          if source.isFlatObservable { SchedulePoint.reach() }
          if !source.keepsAgain(generation) {
            let watch = FiredWatch(ticket: ticket, generation: generation, tracking: tracking)
            if !source.keep(watch) { watch.cancel() }
          }
        } else {
          // Cancelled by a read that began meanwhile and armed a newer watch, which may not
          // have fired: this re-read, which no kept watch covers, is covered by that one.
          tracking.cancel()
          source.coverLatestWatch()
        }
        source.observableChanged(tracking)
      }
      guard countsChanges else { return withObservationTracking(read, didSet: didSet) }
      return withObservationTracking(
        read,
        willSet: { [ticket] _ in
          // Where a test reads before the change is counted, and after, before it is stored.
          SchedulePoint.reach()
          ticket.willChange()
          SchedulePoint.reach()
        }, didSet: didSet)
    }
  #else
    private static func arm<Value>(
      _ ticket: ObservationTicket, countsChanges: Bool, _ read: () -> Value
    ) -> Value {
      withObservationTracking(
        read,
        onChange: { [ticket] in
          // Called before the change is stored, like a will-set callback: counted for every
          // member (`observing`).
          ticket.willChange()
          Task { ticket.fired().0?.dependencyChanged() }
        })
    }
  #endif
}

#if os(Linux)
  // A watch that fired and is kept armed (`TrackedSource.keep`), with the ticket that tells it.
  // A class: `ObservationTracking`'s layout is not known here (another module's, resilient), and
  // copying it inside the source's lock costs more than this allocation.
  final class FiredWatch: Sendable {
    // The ticket's state, not the ticket: while the watch is armed, Observation holds the
    // ticket, and its end (the ticket's deinit) tells the source that its object may be gone;
    // a watch kept must not delay that.
    private let owner: SpinLocked<ObservationTicket.Owner>
    // The read whose watch it is (unique per source): a later ticket may have the address of a
    // dead one.
    let generation: Int
    let tracking: ObservationTracking

    init(ticket: ObservationTicket, generation: Int, tracking: ObservationTracking) {
      owner = ticket.owner
      self.generation = generation
      self.tracking = tracking
    }

    // Marks the ticket cancelled, so that a call Observation chose before re-reads once more
    // and ends (`ObservationTicket.fired`); then Observation's cancel.
    func cancel() {
      owner.withLock { $0.isCancelled = true }
      tracking.cancel()
    }
  }
#endif

extension ContiguousArray where Element == Unretained<BoundToken> {
  // In place, element by element: a changed path (a replaced link) allocates no new list, and
  // costs a fraction of emptying and refilling it (which goes through `replaceSubrange`).
  // Through buffers: one uniqueness check, not one per element.
  @inline(__always)
  fileprivate mutating func replaceContents(with other: ContiguousArray) {
    while count > other.count { removeLast() }
    let shared = count
    withUnsafeMutableBufferPointer { mine in
      other.withUnsafeBufferPointer { theirs in
        for index in 0..<shared { mine[index] = theirs[index] }
      }
    }
    if shared < other.count { append(contentsOf: other[shared...]) }
  }
}
