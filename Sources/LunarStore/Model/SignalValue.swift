import LuaKit

/// How a signal's value is kept in a store: one value in the canonical
/// encoding (`LuaValueCodec`), as step outputs are.
enum SignalValue {
  /// The bytes that keep `value`.
  /// - Throws: `StoreError` for a value that cannot be stored.
  static func encode(_ value: LuaValue, name: LuaString) throws(StoreError) -> [UInt8] {
    do {
      return try LuaValueCodec.encode([value], root: "value")
    } catch {
      throw StoreError(.database, "signal \(name.quoted): \(error)")
    }
  }

  /// The value kept in `bytes`, read back from `store`.
  /// - Throws: `StoreError` naming the row if someone else wrote it badly.
  static func decode(_ bytes: [UInt8], name: LuaString, run: RunID, store: String) throws(StoreError) -> LuaValue {
    do {
      let values = try LuaValueCodec.decode(bytes)
      guard values.count == 1 else { throw LuaValueCodecError(.malformed("\(values.count) values, not one"), offset: 0) }
      return values[0]
    } catch {
      throw StoreError(.database, "store \(store): signal \(name.quoted) of run \(run): \(error)")
    }
  }
}
