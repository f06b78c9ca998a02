@_spi(Testing) import ChainBind
import Testing

// Docs/Semantics.md, "Join and move": a property added again to the chain it is in keeps every
// role it had and gains the new one (`in` + `out` = `inout`); each conversion is the last given.

@Suite("Join: roles are united")
struct JoinRoleTests {
  @Test("a Bind.in in a cell's configure code keeps the model receiving the editor's changes")
  func bindInKeepsTheModelReceiving() {
    let model = Model(string: "draft")
    let editor = TextField()
    let preview = Plain()
    let chain = Bind.inout(model, \.string).inout(editor, \.text, on: .editingChanged)
    // The cell's configure code, written for display only:
    let joined = Bind.in(model, \.string).out(preview, \.string)
    #expect(joined.code == chain.code)
    editor.userTypes("edited")
    #expect(model.string == "edited")
    #expect(preview.string == "edited")
    model.string = "from the model"
    #expect(editor.text == "from the model")
    chain.unbind()
  }

  @Test("a control added again without on: sends with the conversion given last")
  func carriedControlSendsWithTheLastConversion() {
    let model = Model(int: 1)
    let field = TextField()
    let log = ErrorLog()
    let chain = Bind.inout(model, \.int).onError(log.handler)
      .inout(
        field, \.text, on: .editingChanged, convert: { "#\($0)" },
        back: { $0.hasPrefix("#") ? Int($0.dropFirst()) : nil })
    #expect(field.text == "#1")
    // Added again for display, with the automatic conversion: it is the one given last.
    chain.out(field, \.text)
    #expect(field.text == "1")
    field.userTypes("10")
    #expect(model.int == 10)
    #expect(log.errors.isEmpty)
    chain.unbind()
  }

  @Test(
    "the roles unite whatever the order",
    arguments: [
      (first: "in", then: "out"), (first: "out", then: "in"), (first: "inout", then: "in"),
      (first: "inout", then: "out"), (first: "in", then: "inout"),
    ])
  func rolesUnite(first: String, then second: String) {
    let head = Model(int: 1)
    let member = Model(int: 0)
    let chain = Bind.inout(head, \.int)
    add(member, as: first, to: chain)
    add(member, as: second, to: chain)
    #expect(chain.memberCount == 2)
    // It receives...
    head.int = 5
    #expect(member.int == 5)
    // ... and sends.
    member.int = 9
    #expect(head.int == 9)
    chain.unbind()
  }

  @Test("the same role twice stays that role")
  func sameRoleStays() {
    let head = Model(int: 1)
    let member = Model(int: 0)
    let chain = Bind.inout(head, \.int).out(member, \.int).out(member, \.int)
    member.int = 7
    #expect(head.int == 1)  // still only receives
    let sender = Model(int: 3)
    Bind.inout(head, \.int).in(sender, \.int).in(sender, \.int)
    #expect(sender.int == 3)  // still never written
    sender.int = 4
    #expect(head.int == 4)
    chain.unbind()
  }

  @Test("each conversion is the last one given")
  func lastConversionWins() {
    let model = Model(int: 2)
    let label = Plain()
    let chain = Bind.inout(model, \.int)
      .out(label, \.string, convert: { "first \($0)" })
      .out(label, \.string, convert: { "second \($0)" })
    #expect(label.string == "second 2")
    model.int = 3
    #expect(label.string == "second 3")
    chain.unbind()
  }

  @Test("a conversion that is not given again is kept")
  func conversionNotGivenAgainIsKept() {
    let model = Model(int: 2)
    let field = Model()
    let chain = Bind.inout(model, \.int)
      .in(field, \.string, back: { Int($0.dropFirst()) })  // "#5" -> 5
      .out(field, \.string, convert: { "#\($0)" })
    #expect(field.string == "#2")
    field.string = "#8"
    #expect(model.int == 8)
    model.int = 4
    #expect(field.string == "#4")
    chain.unbind()
  }

  @Test("an addition without closures converts both ways as its type does")
  func additionWithoutClosuresConvertsBothWays() {
    let model = Model(int: 2)
    let counter = Model()
    let chain = Bind.inout(model, \.int)
      .out(counter, \.int, convert: { $0 + 1 })
    #expect(counter.int == 3)
    chain.in(counter, \.int)
    #expect(counter.int == 2)
    model.int = 5
    #expect(counter.int == 5)
    counter.int = 7
    #expect(model.int == 7)
    chain.unbind()
  }

  @Test("a control keeps sending on its event when added again without on:")
  func controlKeepsItsEvent() {
    let model = Model(string: "a")
    let field = TextField()
    let log = ErrorLog()
    let chain = Bind.inout(model, \.string).onError(log.handler)
      .in(field, \.text, on: .editingChanged)
      .out(field, \.text)
    #expect(field.text == "a")  // receives now
    field.userTypes("b")
    #expect(model.string == "b")  // still sends on its event
    model.string = "c"
    #expect(field.text == "c")
    #expect(log.errors.isEmpty)
    chain.unbind()
  }

  @Test("to narrow a role, unbind the property, then add it again")
  func narrowingTakesAnUnbind() {
    let head = Model(int: 1)
    let member = Model(int: 0)
    let chain = Bind.inout(head, \.int).inout(member, \.int)
    Bind.unbind(member, \.int)
    chain.in(member, \.int)
    head.int = 5
    #expect(member.int == 1)  // sends only now: keeps the value it had
    member.int = 6
    #expect(head.int == 6)
    chain.unbind()
  }
}

private func add(_ model: Model, as role: String, to chain: Chain<Int>) {
  switch role {
  case "in": chain.in(model, \.int)
  case "out": chain.out(model, \.int)
  default: chain.inout(model, \.int)
  }
}
