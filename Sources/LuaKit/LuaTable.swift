/// A copied Lua table: the array part (keys 1...n with no gap) and the keyed
/// part (every other key) kept apart.
public struct LuaTable: Sendable, Hashable {
  /// Values at keys 1, 2, ..., n; never holds `nil`.
  public private(set) var array: [LuaValue]
  /// Every other key: strings, gaps and negative or float keys.
  public private(set) var fields: [LuaKey: LuaValue]

  /// An empty table.
  public init() {
    array = []
    fields = [:]
  }

  /// A table with an array part and a keyed part. Keys that belong to the
  /// array part (n+1, n+2, ...) move there, so equal tables compare equal.
  public init(array: [LuaValue] = [], fields: [LuaKey: LuaValue] = [:]) {
    self.array = []
    self.fields = [:]
    self.array.reserveCapacity(array.count)
    for value in array { append(value) }
    for (key, value) in fields { self[key] = value }
  }

  /// True when the table has no entries at all.
  public var isEmpty: Bool { array.isEmpty && fields.isEmpty }

  /// The number of entries in both parts.
  public var count: Int { array.count + fields.count }

  /// The value at `key`, `.nil` when absent; assigning `.nil` removes it.
  public subscript(key: LuaKey) -> LuaValue {
    get {
      if case .integer(let i) = key, i >= 1, i <= array.count { return array[Int(i) - 1] }
      return fields[key] ?? .nil
    }
    set {
      if case .integer(let i) = key, i >= 1, i <= array.count {
        if case .nil = newValue {
          // Removing from the array part moves the tail to the keyed part.
          let tail = array[Int(i)...]
          for (offset, value) in tail.enumerated() { fields[.integer(i + 1 + Int64(offset))] = value }
          array.removeSubrange(Int(i) - 1..<array.count)
        } else {
          array[Int(i) - 1] = newValue
        }
        return
      }
      if case .integer(let i) = key, i == array.count + 1, newValue != .nil {
        append(newValue)
        return
      }
      if case .nil = newValue { fields[key] = nil } else { fields[key] = newValue }
    }
  }

  /// The value for a string key.
  public subscript(name: String) -> LuaValue {
    get { self[.string(LuaString(name))] }
    set { self[.string(LuaString(name))] = newValue }
  }

  /// Appends at key n+1, pulling following keys out of the keyed part.
  public mutating func append(_ value: LuaValue) {
    if case .nil = value { return }
    array.append(value)
    while !fields.isEmpty, let next = fields.removeValue(forKey: .integer(Int64(array.count + 1))) {
      array.append(next)
    }
  }

  /// Every entry, array part first in order, then the keyed part.
  public var entries: [(key: LuaKey, value: LuaValue)] {
    var result = array.enumerated().map { (key: LuaKey.integer(Int64($0.offset + 1)), value: $0.element) }
    result += fields.map { (key: $0.key, value: $0.value) }
    return result
  }

  /// Builds a table directly from parts already known to be in normal form
  /// (no key n+1 in `fields`); used by the fast path that reads Lua tables.
  init(normalArray: [LuaValue], normalFields: [LuaKey: LuaValue]) {
    array = normalArray
    fields = normalFields
  }
}

extension LuaTable: CustomStringConvertible {
  /// Lua constructor syntax, keyed entries sorted so output is stable.
  public var description: String {
    var parts = array.map(\.description)
    let keyed = fields.map { ($0.key.description, $0.value.description) }.sorted { $0.0 < $1.0 }
    for (key, value) in keyed { parts.append("\(key) = \(value)") }
    return parts.isEmpty ? "{}" : "{ " + parts.joined(separator: ", ") + " }"
  }
}

extension LuaTable: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
  public init(dictionaryLiteral elements: (LuaKey, LuaValue)...) {
    self.init()
    for (key, value) in elements { self[key] = value }
  }

  public init(arrayLiteral elements: LuaValue...) {
    self.init(array: elements)
  }
}
