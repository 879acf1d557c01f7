import LuaKit

/// How a journal is laid out on disk: a header, then one frame per entry,
/// appended as the run goes.
///
///     file   = magic (0x89 "LUNAR-JOURNAL" CR LF 0x1A LF)  format:u8 (1)  frame*
///     frame  = length:u32 little-endian  entry (length bytes, `JournalEntry.encoded`)
///
/// A frame goes out in one write, so a recorder killed mid-run leaves at
/// most its last frame cut short: reading stops there, as if it had not
/// been written. Anything else that is not a frame is an error.
public enum JournalFile {
  /// The bytes every journal begins with; the 0x89 keeps it from being
  /// taken for text, the line ends catch a copy that translated them.
  static let magic: [UInt8] = [0x89] + Array("LUNAR-JOURNAL".utf8) + [0x0D, 0x0A, 0x1A, 0x0A]
  /// The layout this Lunar writes and reads.
  static let format: UInt8 = 1
  /// What a file begins with before its first frame.
  static let header = magic + [format]

  /// What a journal is, for `FileOutput`: a file that begins with the
  /// magic, or a JSON-lines journal of an earlier Lunar (also Lunar's own,
  /// so recording over one is allowed).
  public static let kind = FileOutput.Kind("a Lunar journal") { head, _ in
    head.starts(with: magic) || head.starts(with: Array(#"{"kind":"#.utf8))
  }

  /// Why a file cannot be replayed; one line naming it.
  public struct Unreadable: Error, Sendable, CustomStringConvertible {
    /// The path as given.
    public let path: String
    /// What is wrong with it.
    public let reason: String
    public var description: String { "cannot replay \(path): \(reason)" }
  }

  /// The frame for `entry`, or nil if it is too large for one (4 GiB).
  static func frame(_ entry: JournalEntry) throws(LuaValueCodecError) -> [UInt8]? {
    let payload = try entry.encoded()
    guard let length = UInt32(exactly: payload.count) else { return nil }
    return withUnsafeBytes(of: length.littleEndian, Array.init) + payload
  }

  /// The entries in the journal `bytes` read from `path`, and whether its
  /// last frame was cut short.
  static func entries(in bytes: [UInt8], path: String) throws(Unreadable) -> (entries: [JournalEntry], cutShort: Bool) {
    guard bytes.starts(with: magic) else {
      let reason =
        bytes.starts(with: Array(#"{"kind":"#.utf8))
        ? "it is a JSON-lines journal of an earlier Lunar; record it again"
        : "it is not a Lunar journal"
      throw Unreadable(path: path, reason: reason)
    }
    guard bytes.count > magic.count else { throw Unreadable(path: path, reason: "its header is cut short") }
    let found = bytes[magic.count]
    guard found == format else {
      throw Unreadable(path: path, reason: "it is a journal of format \(found); this Lunar reads format \(format)")
    }
    var entries: [JournalEntry] = []
    var position = header.count
    while position < bytes.count {
      guard bytes.count - position >= 4 else { return (entries, true) }
      var length = 0
      for index in 0..<4 { length |= Int(bytes[position + index]) << (8 * index) }
      guard bytes.count - position - 4 >= length else { return (entries, true) }
      let payload = Array(bytes[(position + 4)..<(position + 4 + length)])
      let entry: JournalEntry?
      do {
        entry = try JournalEntry(decoding: payload)
      } catch {
        throw Unreadable(path: path, reason: "the entry at byte \(position): \(error)")
      }
      guard let entry else { throw Unreadable(path: path, reason: "the entry at byte \(position) is not a recorded call") }
      entries.append(entry)
      position += 4 + length
    }
    return (entries, false)
  }
}
