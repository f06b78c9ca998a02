// error: 'filter(isolation:_:)' is unavailable: a filter's closure takes the chain's value type, not a member's: a filter sees the chain's value before any member converts it
import ChainBind

final class Model { @Bound var count = 0 }
final class Field { var text = "" }

func bind(_ model: Model, _ field: Field) {
  #if FIXED
    Bind.inout(model, \.count).out(field, \.text).filter { count in count >= 0 }
  #else
    Bind.inout(model, \.count).out(field, \.text).filter { (text: String) in !text.isEmpty }
  #endif
}
