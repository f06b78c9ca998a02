@_spi(Testing) import ChainBind
import Testing

// Docs/Semantics.md, "Sinks that follow their owner": `.out(owner, key:) { owner, value in }`.

private final class Cell {
  var rendered: [String] = []
  func render(_ text: String) { rendered.append(text) }
}

private final class Item {
  @Bound var title: String
  init(_ title: String) { self.title = title }
}

private final class Canary {}

@Suite("Sinks that follow their owner")
struct OwnedSinkTests {
  @Test("the sink receives its owner and the current value, then every change")
  func rendersIntoItsOwner() {
    let item = Item("a")
    let cell = Cell()
    let chain = Bind.in(item, \.title).out(cell, key: "title") { cell, title in cell.render(title) }
    #expect(cell.rendered == ["a"])
    item.title = "b"
    item.title = "b"  // every set of a one-step @Bound source is a change
    #expect(cell.rendered == ["a", "b", "b"])
    #expect(chain.memberCount == 1)  // not counted as a member
    chain.unbind()
  }

  @Test("initial: false waits for the next change")
  func initialFalse() {
    let item = Item("a")
    let cell = Cell()
    let chain = Bind.in(item, \.title)
      .out(cell, key: "title", initial: false) { cell, title in cell.render(title) }
    #expect(cell.rendered.isEmpty)
    item.title = "b"
    #expect(cell.rendered == ["b"])
    chain.unbind()
  }

  @Test("binding the same owner and key to another item moves it, as a reused cell needs")
  func reuseMovesTheSink() {
    let first = Item("first")
    let second = Item("second")
    let cell = Cell()
    let render = { (cell: Cell, title: String) in cell.render(title) }
    let firstChain = Bind.in(first, \.title).out(cell, key: "title", render)
    let secondChain = Bind.in(second, \.title).out(cell, key: "title", render)
    #expect(cell.rendered == ["first", "second"])
    first.title = "stale"
    #expect(cell.rendered == ["first", "second"])
    second.title = "fresh"
    #expect(cell.rendered == ["first", "second", "fresh"])
    firstChain.unbind()
    secondChain.unbind()
  }

  @Test("two keys of one owner are two sinks")
  func keysAreDistinct() {
    let item = Item("a")
    let cell = Cell()
    let chain = Bind.in(item, \.title)
      .out(cell, key: "one") { cell, title in cell.render("1:" + title) }
      .out(cell, key: "two") { cell, title in cell.render("2:" + title) }
    item.title = "b"
    #expect(cell.rendered == ["1:a", "2:a", "1:b", "2:b"])
    chain.unbind()
  }

  @Test("it ends when its owner is deallocated, and its closure is released")
  func endsWithItsOwner() {
    let item = Item("a")
    var cell: Cell? = Cell()
    var canary: Canary? = Canary()
    weak let weakCanary = canary
    let chain = Bind.in(item, \.title)
      .out(cell!, key: "title") { [canary] cell, title in
        _ = canary
        cell.render(title)
      }
    canary = nil
    #expect(weakCanary != nil)  // held by the sink's closure
    cell = nil
    item.title = "b"  // finds the owner gone
    #expect(weakCanary == nil)
    #expect(chain.isActive)
    chain.unbind()
  }

  @Test("Bind.unbind(owner) removes it")
  func unbindOwner() {
    let item = Item("a")
    let cell = Cell()
    let chain = Bind.in(item, \.title).out(cell, key: "title") { cell, title in cell.render(title) }
    Bind.unbind(cell)
    item.title = "b"
    #expect(cell.rendered == ["a"])
    #expect(chain.isActive)
    chain.unbind()
  }

  @Test("sinks run after every member, owned and keyed together in the order added")
  func order() {
    let item = Item("a")
    let cell = Cell()
    let label = Plain()
    var log: [String] = []
    let chain = Bind.inout(item, \.title)
      .out(key: "first") { title in log.append("first \(title)") }
      .out(cell, key: "owned") { _, title in log.append("owned \(title) label=\(label.string)") }
      .out(key: "keyed") { title in log.append("keyed \(title)") }
      .out(label, \.string)
    log = []
    item.title = "b"
    #expect(log == ["first b", "owned b label=b", "keyed b"])
    // A replaced keyed sink moves to the end.
    chain.out(key: "first", initial: false) { title in log.append("first again \(title)") }
    log = []
    item.title = "c"
    #expect(log == ["owned c label=c", "keyed c", "first again c"])
    chain.unbind()
  }
}
