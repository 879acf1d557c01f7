/// What a `LuaValue` costs in Swift's memory: its slot, and the heap
/// buffers of its strings, arrays and dictionaries with the allocator's
/// rounding. A copy of a Lua value is charged this much against the state's
/// memory limit (see `LuaMemoryBudget`).
public enum LuaValueSize {
  /// One value in a variable or an array.
  public static var slot: Int { MemoryLayout<LuaValue>.stride }

  /// The heap buffer of a string of `count` bytes (none when empty).
  public static func string(byteCount count: Int) -> Int {
    count == 0 ? 0 : allocation(32 + count)
  }

  /// The heap buffers of a table's array and keyed parts, without the
  /// buffers of the values they hold.
  public static func table(arrayCount: Int, fieldCount: Int) -> Int {
    var bytes = 0
    if arrayCount > 0 { bytes += allocation(32 + arrayCount * slot) }
    if fieldCount > 0 { bytes += allocation(64 + buckets(fieldCount) * (entry + 1)) }
    return bytes
  }

  /// A `LuaMemoryCharge`: the object's header and two words, rounded by
  /// the allocator. A copy that shares its value's storage costs its slot
  /// and this.
  public static var charge: Int { 48 }

  /// What each element of a table costs before the table knows its final
  /// shape (a field is dearer than an array element).
  static var element: Int { slot }
  static var entry: Int { MemoryLayout<LuaKey>.stride + slot }

  /// A Swift dictionary's buckets for `count` entries: a power of two, at
  /// most three quarters full.
  private static func buckets(_ count: Int) -> Int {
    var buckets = 2
    while buckets * 3 < count * 4 { buckets *= 2 }
    return buckets
  }

  /// A malloc'd block of `n` bytes: glibc's 16-byte chunks with their
  /// 8-byte header, at least 32 bytes.
  private static func allocation(_ n: Int) -> Int { max(32, (n + 8 + 15) & ~15) }
}

extension LuaValue {
  /// The bytes this value takes in Swift's memory (see `LuaValueSize`);
  /// storage shared between copies is counted once per copy.
  public var estimatedSize: Int { LuaValueSize.slot + heapSize }

  /// The bytes of the heap buffers this value owns, its slot excluded.
  var heapSize: Int {
    switch self {
    case .string(let string): LuaValueSize.string(byteCount: string.bytes.count)
    case .table(let table): table.heapSize
    default: 0
    }
  }
}

extension LuaTable {
  /// The bytes of the table's buffers and of everything in them.
  var heapSize: Int {
    var bytes = LuaValueSize.table(arrayCount: array.count, fieldCount: fields.count)
    for value in array { bytes += value.heapSize }
    for (key, value) in fields {
      if case .string(let string) = key { bytes += LuaValueSize.string(byteCount: string.bytes.count) }
      bytes += value.heapSize
    }
    return bytes
  }
}
