/// A Lua 5.4 function's bytecode (`string.dump(f, true)`) without the lines
/// its functions are defined at: a stripped dump still keeps each
/// function's first and last line, so moving a step's function would count
/// as a change of its code. A dump this reader does not follow is kept as
/// it is (a change is then seen where there may be none, never the reverse).
enum StepBytecode {
  /// `dump` with every function's `linedefined` and `lastlinedefined` left out.
  static func withoutLines(_ dump: [UInt8]) -> [UInt8] {
    var reader = Reader(bytes: dump)
    // Header: signature (4), version, format, LUAC_DATA (6), three sizes,
    // LUAC_INT (8), LUAC_NUM (8); then the main function's upvalue count.
    let headerSize = 4 + 1 + 1 + 6 + 3 + 8 + 8 + 1
    guard dump.count > headerSize, dump[4] == 0x54, dump[12] == 4, dump[13] == 8, dump[14] == 8 else { return dump }
    reader.position = headerSize
    var out = Array(dump[0..<headerSize])
    guard reader.function(into: &out), reader.position == dump.count else { return dump }
    return out
  }

  private struct Reader {
    let bytes: [UInt8]
    var position = 0

    /// A size as `dumpSize` writes it: 7 bits a byte, the last with bit 8 set.
    mutating func size(into out: inout [UInt8]?) -> Int? {
      var value = 0
      for _ in 0..<10 {
        guard position < bytes.count else { return nil }
        let byte = bytes[position]
        position += 1
        out?.append(byte)
        value = (value << 7) | Int(byte & 0x7F)
        if byte & 0x80 != 0 { return value }
      }
      return nil
    }

    mutating func copy(_ count: Int, into out: inout [UInt8]) -> Bool {
      guard count >= 0, position + count <= bytes.count else { return false }
      out.append(contentsOf: bytes[position..<(position + count)])
      position += count
      return true
    }

    mutating func sizeCopied(into out: inout [UInt8]) -> Int? {
      var copied: [UInt8]? = []
      guard let value = size(into: &copied), value < bytes.count else { return nil }
      out.append(contentsOf: copied ?? [])
      return value
    }

    mutating func string(into out: inout [UInt8]) -> Bool {
      guard let size = sizeCopied(into: &out) else { return false }
      return size == 0 || copy(size - 1, into: &out)
    }

    mutating func function(into out: inout [UInt8]) -> Bool {
      guard string(into: &out) else { return false }  // source (none when stripped)
      var skipped: [UInt8]? = nil
      guard size(into: &skipped) != nil, size(into: &skipped) != nil else { return false }  // the lines
      guard copy(3, into: &out) else { return false }  // numparams, is_vararg, maxstacksize
      guard let code = sizeCopied(into: &out), copy(code * 4, into: &out) else { return false }
      guard let constants = sizeCopied(into: &out) else { return false }
      for _ in 0..<constants {
        guard position < bytes.count else { return false }
        let tag = bytes[position]
        guard copy(1, into: &out) else { return false }
        switch tag {
        case 0, 1, 17: break  // nil, false, true
        case 3, 19: guard copy(8, into: &out) else { return false }  // integer, float
        case 4, 20: guard string(into: &out) else { return false }  // short, long string
        default: return false
        }
      }
      guard let upvalues = sizeCopied(into: &out), copy(upvalues * 3, into: &out) else { return false }
      guard let protos = sizeCopied(into: &out) else { return false }
      for _ in 0..<protos {
        guard function(into: &out) else { return false }
      }
      // Debug information: line info (bytes), absolute line info (pairs of
      // sizes), local variables (name, two sizes), upvalue names.
      guard let lines = sizeCopied(into: &out), copy(lines, into: &out) else { return false }
      guard let absolute = sizeCopied(into: &out) else { return false }
      for _ in 0..<absolute {
        guard sizeCopied(into: &out) != nil, sizeCopied(into: &out) != nil else { return false }
      }
      guard let locals = sizeCopied(into: &out) else { return false }
      for _ in 0..<locals {
        guard string(into: &out), sizeCopied(into: &out) != nil, sizeCopied(into: &out) != nil else { return false }
      }
      guard let names = sizeCopied(into: &out) else { return false }
      for _ in 0..<names {
        guard string(into: &out) else { return false }
      }
      return true
    }
  }
}
