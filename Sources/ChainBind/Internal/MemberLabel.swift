// Names a member for chain codes and error messages. Computed when printed, not when bound:
// binding stays cheap and a label costs two pointers.
//
// @unchecked Sendable: key path objects are immutable once created; only their description is
// ever read here.
struct MemberLabel: @unchecked Sendable, CustomStringConvertible {
  let keyPath: AnyKeyPath
  // For @Bound properties the key path itself is computed (it prints as an address); the
  // storage key path of the wrapper names the stored `_property` instead. Other key paths are
  // printed as the standard library prints them, computed components as `<computed Type>`.
  let storageKeyPath: AnyKeyPath?

  init(keyPath: AnyKeyPath, storageKeyPath: AnyKeyPath?) {
    self.keyPath = keyPath
    self.storageKeyPath = storageKeyPath
  }

  var description: String {
    let rootType = type(of: keyPath).rootType
    let root = String(describing: rootType)
    if let storageKeyPath {
      let stored = Self.path(of: storageKeyPath)
      let name = stored.hasPrefix("_") ? String(stored.dropFirst()) : stored
      return "\(root).\(name)"
    }
    return "\(root).\(Self.path(of: keyPath))"
  }

  // `\Root.a.b` -> `a.b`; computed components lose their addresses: `<computed Int>`.
  static func path(of keyPath: AnyKeyPath) -> String {
    var text = String(describing: keyPath)
    if text.hasPrefix("\\") { text.removeFirst() }
    let root = String(describing: type(of: keyPath).rootType)
    if text.hasPrefix(root + ".") { text.removeFirst(root.count + 1) }
    var result = ""
    var rest = Substring(text)
    while let open = rest.range(of: "<computed ") {
      result += rest[..<open.lowerBound]
      let afterOpen = rest[open.upperBound...]
      guard let typeStart = afterOpen.firstIndex(of: "("),
        let close = afterOpen.range(of: ")>")
      else {
        result += rest[open.lowerBound...]
        rest = ""
        break
      }
      let typeName = afterOpen[afterOpen.index(after: typeStart)..<close.lowerBound]
      result += "<computed \(typeName)>"
      rest = afterOpen[close.upperBound...]
    }
    result += rest
    return result
  }
}

extension Substring {
  fileprivate func range(of needle: String) -> Range<Index>? {
    var index = startIndex
    while index < endIndex {
      if self[index...].hasPrefix(needle) {
        return index..<self.index(index, offsetBy: needle.count)
      }
      index = self.index(after: index)
    }
    return nil
  }
}
