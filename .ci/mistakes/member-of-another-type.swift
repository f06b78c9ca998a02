// error: 'out(_:_:isolation:)' is unavailable: the property's type is not the chain's value type, and the two are not both BindConvertible: pass 'convert:', or make both types conform to BindConvertible
import ChainBind

struct Money { var cents = 0 }
final class Model { @Bound var cents = 0 }
final class Wallet { var money = Money() }

func bind(_ model: Model, _ wallet: Wallet) {
  #if FIXED
    Bind.inout(model, \.cents).out(wallet, \.money, convert: { Money(cents: $0) })
  #else
    Bind.inout(model, \.cents).out(wallet, \.money)
  #endif
}
