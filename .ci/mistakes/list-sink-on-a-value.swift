// error: 'outChanges(key:initial:isolation:_:)' is unavailable: outChanges needs a chain whose value is an Array of Equatable elements: use 'out(key:)' to receive each value of any other chain
import ChainBind

final class Feed { @Bound var count = 0 }

func bind(_ feed: Feed) {
  #if FIXED
    Bind.in(feed, \.count).out(key: "count") { count in print(count) }
  #else
    Bind.in(feed, \.count).outChanges(key: "rows") { change in print(change.inserted) }
  #endif
}
