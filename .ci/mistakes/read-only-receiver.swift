// error: 'out(_:_:isolation:)' is unavailable: a read-only property (a 'let', or a computed property without 'set') cannot receive: make it a 'var', or add it with '.in(_:_:)' to only send
import ChainBind

final class Model { @Bound var count = 0 }
final class Badge { let count = 0 }

func bind(_ model: Model, _ badge: Badge) {
  #if FIXED
    Bind.inout(model, \.count).in(badge, \.count)
  #else
    Bind.inout(model, \.count).out(badge, \.count)
  #endif
}
