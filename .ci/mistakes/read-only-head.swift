// error: 'inout(_:_:isolation:)' is unavailable: a read-only property (a 'let', or a computed property without 'set') cannot receive: make it a 'var', or start the chain with 'Bind.in(_:_:)' to only send
import ChainBind

final class Cart {
  @Bound var items = 0
  var total: Int { items * 2 }
}
final class Label { var text = "" }

func bind(_ cart: Cart, _ label: Label) {
  #if FIXED
    Bind.in(cart, \.total).out(label, \.text)
  #else
    Bind.inout(cart, \.total).out(label, \.text)
  #endif
}
