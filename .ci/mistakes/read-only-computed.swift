// error: 'inout(_:_:isolation:)' is unavailable: a read-only property (a 'let', or a computed property without 'set') cannot receive: make it a 'var', or add it with '.in(_:_:)' to only send
import ChainBind

final class Model { @Bound var total = 0 }
final class Cart {
  @Bound var items = 0
  var total: Int { items * 2 }
}

func bind(_ model: Model, _ cart: Cart) {
  #if FIXED
    Bind.inout(model, \.total).in(cart, \.total)
  #else
    Bind.inout(model, \.total).inout(cart, \.total)
  #endif
}
