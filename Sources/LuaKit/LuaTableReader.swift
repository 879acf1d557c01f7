/// A table on a Lua stack, read field by field and checked: a definition
/// or options table given by a script. Reads are raw (no metamethod runs),
/// leave the stack as they found it, and a field of the wrong type is a
/// `LuaConversionError` naming it by its path: `states.idle.on: table
/// expected, got number`. Absent fields (nil) read as nil.
public struct LuaTableReader {
  /// The stack the table is on.
  public let thread: LuaThread
  /// The table's index, counted from the bottom.
  public let index: Int32
  /// How errors name the table (`LuaPath("")` names fields from the root:
  /// `context.items`).
  public let path: LuaPath

  /// A reader of the table at the absolute `index` of `thread`.
  init(_ thread: LuaThread, at index: Int32, path: LuaPath) {
    self.thread = thread
    self.index = index
    self.path = path
  }

  // MARK: Types

  /// The type of `t[key]`.
  public func type(of key: LuaKey) -> LuaType {
    thread.withStackScope { pushField(key) }
  }

  /// The type name messages use for `t[key]` (`__name` first).
  public func typeName(of key: LuaKey) -> String {
    thread.withStackScope {
      pushField(key)
      return thread.typeName(at: -1)
    }
  }

  // MARK: Plain fields

  /// `t[key]` if it is a string (numbers are not converted: a name is a
  /// string), as its bytes; nil if absent.
  public func string(_ key: LuaKey) throws(LuaConversionError) -> LuaString? {
    try read(key, expected: "string") { $0 == .string ? thread.bytes(at: -1) : nil }
  }

  /// `t[key]` if it is a boolean; nil if absent.
  public func boolean(_ key: LuaKey) throws(LuaConversionError) -> Bool? {
    try read(key, expected: "boolean") { $0 == .boolean ? thread.boolean(at: -1) : nil }
  }

  /// `t[key]` if it is an integer, or a float with an exact integer value;
  /// nil if absent.
  public func integer(_ key: LuaKey) throws(LuaConversionError) -> Int64? {
    try read(key, expected: "integer") { _ in thread.integer(at: -1) }
  }

  /// `t[key]` if it is a number; nil if absent.
  public func number(_ key: LuaKey) throws(LuaConversionError) -> Double? {
    try read(key, expected: "number") { _ in thread.number(at: -1) }
  }

  /// `t[key]` if it is a function, anchored in the registry of `owner`
  /// (the state this table's thread belongs to); nil if absent.
  public func function(_ key: LuaKey, in owner: LuaState) throws(LuaConversionError) -> LuaReference? {
    try read(key, expected: "function") { type in
      guard type == .function else { return nil }
      thread.pushValue(at: -1)
      return LuaReference(popping: thread, in: owner)
    }
  }

  /// A copy of `t[key]` (`.nil` if absent); a value that cannot cross is
  /// an error naming its path inside this table.
  public func value(_ key: LuaKey) throws(LuaConversionError) -> LuaValue {
    try thread.withStackScope { () throws(LuaConversionError) -> LuaValue in
      pushField(key)
      return try thread.value(at: -1, root: path.appending(key).description)
    }
  }

  // MARK: Nested tables

  /// Calls `body` with a reader of the table `t[key]` and returns what it
  /// returns; nil (without calling it) if the field is absent.
  /// - Throws: a `LuaConversionError` if the field is not a table, or what
  ///   `body` throws.
  @discardableResult public func table<T>(_ key: LuaKey, _ body: (LuaTableReader) throws -> T) throws -> T? {
    try thread.withStackScope { () throws -> T? in
      switch pushField(key) {
      case .nil: return nil
      case .table: return try body(LuaTableReader(thread, at: thread.top, path: path.appending(key)))
      default: throw mismatch(key, expected: "table")
      }
    }
  }

  // MARK: The whole table

  /// Calls `body` with each key and value, in Lua's `next` order (see
  /// `LuaStack.forEachEntry`).
  public func forEach<E: Error>(_ body: (_ key: LuaStackValue, _ value: LuaStackValue) throws(E) -> Void) throws(E) {
    try thread.forEachEntry(of: index, body)
  }

  /// How many entries the table has.
  public var count: Int { thread.entryCount(of: index) }

  /// The table's border `#t`, as `rawlen` finds it.
  public var length: Int { thread.rawLength(at: index) }

  /// Every key that is not one of `known`, as a message shows it: `'name'`
  /// for a string, `[1]` for a number, `[boolean]` for any other type;
  /// sorted. A misspelt field of a definition shows up here instead of
  /// being ignored without a word.
  public func unknownKeys(known: Set<LuaString>) -> [String] {
    var unknown: [String] = []
    forEach { key, _ in
      switch key.type {
      case .string:
        if let name = key.bytes, !known.contains(name) { unknown.append("'\(name)'") }
      case .number:
        unknown.append("[\(key.bytes ?? "?")]")
      default:
        unknown.append("[\(key.typeName)]")
      }
    }
    return unknown.sorted()
  }

  // MARK: Reading one field

  /// Pushes `t[key]` and returns its type.
  @discardableResult private func pushField(_ key: LuaKey) -> LuaType {
    switch key {
    case .boolean(let value): thread.push(value)
    case .integer(let value): thread.push(value)
    case .number(let value): thread.push(value)
    case .string(let value): thread.push(value)
    }
    return thread.pushField(keyAt: -1, of: index)
  }

  /// `t[key]` as `convert` reads it from the top of the stack; nil if the
  /// field is absent, a type error if `convert` gives nil for a value.
  private func read<T>(_ key: LuaKey, expected: String, _ convert: (LuaType) -> T?) throws(LuaConversionError) -> T? {
    try thread.withStackScope { () throws(LuaConversionError) -> T? in
      let type = pushField(key)
      if type == .nil { return nil }
      guard let value = convert(type) else { throw mismatch(key, expected: expected) }
      return value
    }
  }

  /// The error for `t[key]`, on top of the stack, not being `expected`.
  private func mismatch(_ key: LuaKey, expected: String) -> LuaConversionError {
    LuaConversionError(.typeMismatch(expected: expected, got: thread.typeName(at: -1)), at: path.appending(key))
  }
}
