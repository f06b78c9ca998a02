extension Bind {
  /// Runs `body`, then delivers each chain it changed once.
  ///
  /// Each change made in `body` on this thread goes through its chain's filters at once (a
  /// rejected one is reverted at once) and, if accepted, becomes the chain's value; its delivery
  /// waits for the end of the outermost batch. Then each chain changed delivers once, in the
  /// order the chains were first changed: every receiving member that does not hold the chain's
  /// value is written, each sink is called once, each list sink gets one ``ListChange`` from
  /// the list before the batch to the list after it, and each tracked member is re-read once:
  /// a computed property's or a nested path's change is found, and filtered, then (an
  /// `@Observable` property bound by itself is read and filtered at once, on Linux). While the
  /// batch runs, receiving members still show the values from before it.
  ///
  /// Nested batches join the outermost. A `body` that throws still delivers what it changed,
  /// then rethrows: a batch groups, it does not roll back. Changes queued to another actor, and
  /// changes to a chain that is delivering already (a batch opened in its sink), are delivered
  /// as without a batch.
  ///
  /// ```swift
  /// Bind.batch {
  ///   form.username = "ann"      // canLogIn is re-read once,
  ///   form.password = "secret1"  // and a sink on it called once
  /// }
  /// ```
  ///
  /// - Parameter body: The code that changes chains' members.
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws, after the chains it changed delivered.
  public static func batch<R>(_ body: () throws -> R) rethrows -> R {
    if Batch.openHere != nil { return try body() }
    let batch = Batch()
    openBatches.add(1, ordering: .relaxed)
    let isPublished = batch.publish()
    defer {
      if isPublished { batch.unpublish() }
      openBatches.subtract(1, ordering: .relaxed)
      batch.deliver()
    }
    return try Batch.$current.withValue(batch, operation: body)
  }
}
