import CLua
import CLuaShim

/// A Lua value laid out for people, in Lua constructor syntax: strings
/// quoted with every byte that is not printable ASCII escaped, array
/// elements first, then keyed entries sorted by how their keys print. Made
/// from a `LuaValue` (`lunar runs show`) or from a live value on a Lua
/// stack (the console), which may hold what no `LuaValue` can: functions,
/// userdata and cycles, and may be too deep or wide to print whole, so a
/// live value's walk is bounded.
public indirect enum LuaDisplay: Sendable, Equatable {
  /// A value printed as it is: `1`, `"text"`, `function: 0x...`.
  case atom(String)
  /// A table's entries in print order.
  case table([Entry])

  /// One entry of a table: a keyed one has its key's text (`name`, `[2.5]`).
  public struct Entry: Sendable, Equatable {
    /// The key as it prints, or nil for an element of the array part (and
    /// for the note that says how many entries were left out).
    public let key: String?
    /// The value.
    public let value: LuaDisplay

    /// An entry.
    public init(key: String?, value: LuaDisplay) {
      self.key = key
      self.value = value
    }
  }

  /// How much of a live value is shown.
  public struct Bounds: Sendable {
    /// Tables nested deeper than this show as `{...}`.
    public var depth = 8
    /// Entries shown of one table; the rest are counted in a note.
    public var width = 64

    /// The console's bounds.
    public init() {}
  }

  /// `value` laid out whole (a `LuaValue` is finite and has no cycles).
  public init(_ value: LuaValue) {
    guard case .table(let table) = value else {
      self = .atom(value.description)
      return
    }
    var entries = table.array.map { Entry(key: nil, value: LuaDisplay($0)) }
    let keyed = table.fields.map { (key: $0.key.description, value: $0.value) }.sorted { $0.key < $1.key }
    entries += keyed.map { Entry(key: $0.key, value: LuaDisplay($0.value)) }
    self = .table(entries)
  }

  /// The value at `index` on `L`, read with raw accesses only (no
  /// metamethod runs, so reading cannot raise), within `bounds`. A table
  /// met again inside itself shows as `<cycle: table: 0x...>`.
  public static func live(_ L: OpaquePointer, at index: Int32, bounds: Bounds = Bounds()) -> LuaDisplay {
    var path: Set<UnsafeRawPointer> = []
    return live(L, lua_absindex(L, index), bounds: bounds, depth: 0, path: &path)
  }

  private static func live(
    _ L: OpaquePointer, _ index: Int32, bounds: Bounds, depth: Int, path: inout Set<UnsafeRawPointer>
  ) -> LuaDisplay {
    guard lua_type(L, index) == LUA_TTABLE else { return .atom(atom(L, index)) }
    let address = lua_topointer(L, index)!
    if path.contains(address) { return .atom("<cycle: \(addressText(L, index))>") }
    if depth >= bounds.depth { return .atom("{...}") }
    guard lua_checkstack(L, 4) != 0 else { return .atom("{...}") }
    path.insert(address)
    defer { path.remove(address) }
    var entries: [Entry] = []
    var count = 0
    // The array part: 1, 2, ... up to the first nil.
    var n: lua_Integer = 1
    while lua_rawgeti(L, index, n) != LUA_TNIL {
      count += 1
      if entries.count < bounds.width {
        entries.append(Entry(key: nil, value: live(L, lua_gettop(L), bounds: bounds, depth: depth + 1, path: &path)))
      }
      lua_settop(L, -2)
      n += 1
    }
    lua_settop(L, -2)
    var keyed: [(key: String, value: LuaDisplay)] = []
    lua_pushnil(L)
    while lua_next(L, index) != 0 {
      let isArrayKey = lua_isinteger(L, -2) != 0 && lua_tointegerx(L, -2, nil) >= 1 && lua_tointegerx(L, -2, nil) < n
      if !isArrayKey {
        count += 1
        if entries.count + keyed.count < bounds.width {
          keyed.append((key(L, lua_gettop(L) - 1), live(L, lua_gettop(L), bounds: bounds, depth: depth + 1, path: &path)))
        }
      }
      lua_settop(L, -2)
    }
    entries += keyed.sorted { $0.key < $1.key }.map { Entry(key: $0.key, value: $0.value) }
    if count > entries.count { entries.append(Entry(key: nil, value: .atom("... (\(count - entries.count) more)"))) }
    return .table(entries)
  }

  /// A key as a table constructor writes it: `name` for an identifier,
  /// `[value]` otherwise.
  private static func key(_ L: OpaquePointer, _ index: Int32) -> String {
    if lua_type(L, index) == LUA_TSTRING {
      let string = LuaString(bytes: bytes(L, index))
      if string.isIdentifier { return string.lossyString }
    }
    return "[\(atom(L, index))]"
  }

  /// A value that is not a table, as the console shows it nested.
  private static func atom(_ L: OpaquePointer, _ index: Int32) -> String {
    switch lua_type(L, index) {
    case LUA_TNIL: return "nil"
    case LUA_TBOOLEAN: return lua_toboolean(L, index) != 0 ? "true" : "false"
    case LUA_TNUMBER:
      if lua_isinteger(L, index) != 0 { return String(lua_tointegerx(L, index, nil)) }
      return LuaValue.number(lua_tonumberx(L, index, nil)).description
    case LUA_TSTRING: return LuaString(bytes: bytes(L, index)).quoted
    default: return addressText(L, index)
    }
  }

  /// `function: 0x...`, as `tostring` writes a value without `__tostring`,
  /// named by its metatable's `__name` when it has a string one (read raw).
  private static func addressText(_ L: OpaquePointer, _ index: Int32) -> String {
    var name = String(cString: lua_typename(L, lua_type(L, index)))
    if lua_getmetatable(L, index) != 0 {
      lua_pushstring(L, "__name")
      if lua_rawget(L, -2) == LUA_TSTRING { name = LuaString(bytes: bytes(L, -1)).lossyString }
      lua_settop(L, -3)
    }
    let address = UInt(bitPattern: lua_topointer(L, index))
    return "\(name): 0x" + String(address, radix: 16)
  }

  private static func bytes(_ L: OpaquePointer, _ index: Int32) -> [UInt8] {
    var length = 0
    guard let chars = lua_tolstring(L, index, &length) else { return [] }
    return Array(UnsafeRawBufferPointer(start: chars, count: length))
  }

  /// The whole value on one line.
  public var flat: String {
    switch self {
    case .atom(let text): return text
    case .table(let entries):
      guard !entries.isEmpty else { return "{}" }
      let parts = entries.map { entry in (entry.key.map { "\($0) = " } ?? "") + entry.value.flat }
      return "{ " + parts.joined(separator: ", ") + " }"
    }
  }

  /// The value written from column `column`, on one line if it fits in
  /// `width` columns, else a table's entries on lines of their own,
  /// indented by `indent` + 2 spaces, each ending with a comma; with
  /// `packed`, elements of the array part that print on one line share
  /// lines, as many as fit.
  public func rendered(indent: Int = 0, column: Int = 0, width: Int = 100, packed: Bool = false) -> String {
    let line = flat
    guard case .table(let entries) = self, column + line.count > width else { return line }
    let inner = String(repeating: " ", count: indent + 2)
    var lines = ["{"]
    var row = ""
    for entry in entries {
      let prefix = entry.key.map { "\($0) = " } ?? ""
      let text = entry.value.rendered(indent: indent + 2, column: indent + 2 + prefix.count, width: width, packed: packed) + ","
      if packed, entry.key == nil, !text.contains("\n") {
        if !row.isEmpty, inner.count + row.count + 1 + text.count > width {
          lines.append(inner + row)
          row = ""
        }
        row += row.isEmpty ? text : " " + text
        continue
      }
      if !row.isEmpty {
        lines.append(inner + row)
        row = ""
      }
      lines.append(inner + prefix + text)
    }
    if !row.isEmpty { lines.append(inner + row) }
    lines.append(String(repeating: " ", count: indent) + "}")
    return lines.joined(separator: "\n")
  }
}
