@_spi(Testing) import ChainBind
import Dispatch
import Testing

// UI-style members: a control's property bound `on:` an event sends when that event is sent.

@Suite struct ControlEventsTests {
  @Suite struct Events {
    @Test func sendDrivesOnlyMembersBoundToThatEvent() {
      let model = Model()
      let field = TextField()
      Bind.inout(model, \.string).inout(field, \.text, on: .editingDidEnd)

      field.text = "draft"
      field.controlEvents.send(.editingChanged)
      #expect(model.string == "")
      #expect(model.stringSets == 0)

      field.controlEvents.send(.editingDidEnd)
      #expect(model.string == "draft")
      #expect(model.stringSets == 1)
    }

    @Test func programmaticSetsWithoutAnEventAreNotChanges() {
      let model = Model()
      let slider = Slider()
      Bind.inout(model, \.double).inout(slider, \.value, on: .valueChanged)
      slider.value = 0.3
      #expect(model.double == 0)
      #expect(model.doubleSets == 0)
      slider.controlEvents.send(.valueChanged)
      #expect(model.double == 0.3)
    }

    @Test func twoPropertiesOfOneControlBoundToDifferentEventsEachWork() {
      let textModel = Model()
      let placeholderModel = Model()
      let field = TextField()
      Bind.inout(textModel, \.string).inout(field, \.text, on: .editingChanged)
      Bind.inout(placeholderModel, \.string).inout(field, \.placeholder, on: .editingDidEnd)

      field.placeholder = "hint"
      field.userTypes("typed")
      #expect(textModel.string == "typed")
      #expect(textModel.stringSets == 1)
      #expect(placeholderModel.stringSets == 0)

      field.text = "ignored"
      field.controlEvents.send(.editingDidEnd)
      #expect(placeholderModel.string == "hint")
      #expect(placeholderModel.stringSets == 1)
      #expect(textModel.string == "typed")
      #expect(textModel.stringSets == 1)

      textModel.string = "from text model"
      placeholderModel.string = "from placeholder model"
      #expect(field.text == "from text model")
      #expect(field.placeholder == "from placeholder model")
    }

    @Test func oneEventDrivesEveryMemberBoundToIt() {
      let first = Model()
      let second = Model()
      let field = TextField()
      Bind.inout(first, \.string).inout(field, \.text, on: .editingChanged)
      Bind.inout(second, \.string).in(field, \.placeholder, on: .editingChanged)
      field.placeholder = "p"
      field.userTypes("t")
      #expect(first.string == "t")
      #expect(second.string == "p")
    }
  }

  @Suite struct Heads {
    @Test func inoutControlHeadSendsAndReceives() {
      let slider = Slider()
      slider.value = 0.25
      let plain = Plain()
      let model = Model()
      let chain = Bind.inout(slider, \.value, on: .valueChanged)
        .out(plain, \.double)
        .inout(model, \.double)
      #expect(plain.double == 0.25)
      #expect(model.double == 0.25)

      slider.userSlides(to: 0.5)
      #expect(plain.double == 0.5)
      #expect(model.double == 0.5)

      model.double = 0.75
      #expect(slider.value == 0.75)
      #expect(plain.double == 0.75)
      #expect(chain.memberCount == 3)
    }

    @Test func inControlHeadSendsButIsNeverWritten() {
      let field = TextField()
      field.text = "initial"
      let model = Model()
      let chain = Bind.in(field, \.text, on: .editingChanged).inout(model, \.string)
      #expect(model.string == "initial")
      let writes = field.textWrites

      model.string = "from model"
      #expect(field.text == "initial")
      #expect(field.textWrites == writes)

      field.userTypes("typed")
      #expect(model.string == "typed")
      #expect(chain.isActive)
    }

    @Test func controlHeadJoinsItsChain() {
      let field = TextField()
      let model = Model()
      let first = Bind.inout(model, \.string).inout(field, \.text, on: .editingChanged)
      let joined = Bind.inout(field, \.text, on: .editingChanged)
      #expect(joined.code == first.code)
      #expect(first.memberCount == 2)
    }
  }

  // An event is a change made when it fires: after its member was unbound, it goes nowhere,
  // even while another thread's delivery keeps the member alive (it left during that delivery).
  @Test func anEventAfterItsMemberWasUnboundDuringAnotherThreadsDeliveryIsNotSent() {
    final class Shared: @unchecked Sendable {
      let model = Model()
      let field = TextField()
    }
    let shared = Shared()
    let inSink = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let holding = LockedBox(false)
    let chain = Bind.inout(shared.model, \.string)
      .inout(shared.field, \.text, on: .editingChanged)
      .out(key: "held") { _ in
        guard holding.withLock({ $0 }) else { return }
        inSink.signal()
        resume.wait()
      }
    holding.withLock { $0 = true }
    let delivering = startThread { shared.model.string = "a" }
    #expect(inSink.wait(timeout: .now() + 30) == .success)
    // The other thread is inside the delivery's sink: the field was written "a" before it.
    #expect(shared.field.text == "a")
    Bind.unbind(shared.field)
    shared.field.userTypes("typed after unbind")
    holding.withLock { $0 = false }
    resume.signal()
    #expect(delivering.wait(timeout: .now() + 30) == .success)
    #expect(waitUntilIdle(chain))
    #expect(shared.model.string == "a")
    #expect(chain.memberCount == 1)
  }

  @Suite struct Deallocation {
    @Test func controlDeallocationRemovesEveryMembershipIncludingThoseWithoutOn() {
      let model = Model()
      let textChain = Bind.inout(model, \.string)
      let placeholderChain = Bind.inout(model, \.optionalString)
      weak var weakField: TextField?
      do {
        let field = TextField()
        weakField = field
        textChain.inout(field, \.text, on: .editingChanged)
        placeholderChain.out(field, \.placeholder, convert: { $0 ?? "" })
        #expect(textChain.attachedMemberCount == 2)
        #expect(placeholderChain.attachedMemberCount == 2)
      }
      #expect(weakField == nil)
      #expect(textChain.attachedMemberCount == 1)
      #expect(placeholderChain.attachedMemberCount == 1)
      #expect(textChain.memberCount == 1)
      #expect(textChain.isActive)
      #expect(placeholderChain.isActive)
    }

    // Its `controlEvents`, kept by another object (a thread that sends its events), outlives
    // it: the membership ends at the next event sent on it, and its chain with it.
    @Test func aControlWhoseEventsAreKeptElsewhereEndsAtTheNextEvent() {
      let model = Model()
      let target = Plain()
      let shared = Bind.inout(model, \.string)
      weak var weakField: TextField?
      let (events, chain) = {
        let field = TextField()
        weakField = field
        shared.inout(field, \.text, on: .editingChanged)
        return (
          field.controlEvents,
          Bind.in(field, \.placeholder, on: .editingDidEnd).out(target, \.string)
        )
      }()
      #expect(weakField == nil)
      #expect(shared.memberCount == 2)  // nothing told them yet
      #expect(chain.isActive)
      events.send(.editingChanged)
      #expect(shared.memberCount == 1)
      #expect(shared.isActive)
      #expect(chain.isActive)  // not the event its member is bound to
      events.send(.editingDidEnd)
      #expect(!chain.isActive)
      #expect(model.string == "")
      #expect(target.string == "")
    }

    @Test func controlsBoundOnlyWithoutOnAreRemovedWhenDeallocated() {
      let model = Model()
      let stringChain = Bind.inout(model, \.string)
      let errors = ErrorLog()
      let doubleChain = Bind.inout(model, \.double).onError(errors.handler)
      do {
        let field = TextField()
        let slider = Slider()
        stringChain.out(field, \.text)
        doubleChain.inout(slider, \.value)
        #expect(errors.errors.map(\.cause) == [.notObservable])
        #expect(stringChain.attachedMemberCount == 2)
        #expect(doubleChain.attachedMemberCount == 2)
      }
      #expect(stringChain.attachedMemberCount == 1)
      #expect(doubleChain.attachedMemberCount == 1)
      #expect(stringChain.isActive)
      #expect(doubleChain.isActive)
    }

    @Test func aControlBoundThroughANonControlTypeIsRemovedWhenDeallocated() {
      let model = Model()
      let chain = Bind.inout(model, \.string)
      do {
        let widget: Widget = TitledWidget()
        chain.out(widget, \.title)
        #expect(chain.attachedMemberCount == 2)
      }
      #expect(chain.attachedMemberCount == 1)
    }

    @Test func controlDeallocationReleasesChainsItAloneSendsTo() throws {
      try withIsolatedRegistry {
        let textTarget = Plain()
        let placeholderTarget = Plain()
        var textChain: Chain<String>?
        var placeholderChain: Chain<String>?
        do {
          let field = TextField()
          textChain = Bind.inout(field, \.text, on: .editingChanged).out(textTarget, \.string)
          placeholderChain = Bind.in(field, \.placeholder, on: .editingDidEnd)
            .out(placeholderTarget, \.string)
          #expect(Bind.activeChainCount == 2)
        }
        let releasedText = try #require(textChain)
        let releasedPlaceholder = try #require(placeholderChain)
        #expect(!releasedText.isActive)
        #expect(!releasedPlaceholder.isActive)
        #expect(Bind.activeChainCount == 0)
      }
    }
  }
}

/// A class that is not a control, and a subclass that is: bound through the base type.
private class Widget {
  var title = ""
}

private final class TitledWidget: Widget, ControlEventSource {
  enum Event { case edited }
  let controlEvents = ControlEvents<Event>()
}
