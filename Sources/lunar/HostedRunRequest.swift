import LunarStore

/// A run `lunar worker` hands to one of its warm `lunar run --host-runs`
/// processes, as one line on the socket between them: `RUN:TOKEN`, then
/// the file and each argument in hex (so any byte, a newline too, passes).
/// The process answers `RUN STATUS` once the run ended.
struct HostedRunRequest: Equatable {
  /// The run, and the worker's token for it.
  var handover: RunHandover
  /// The workflow file, under the worker's root.
  var file: String
  /// The run's arguments.
  var arguments: [String]

  /// The request's line, with its newline.
  var line: [UInt8] {
    Array(([handover.description] + ([file] + arguments).map(Self.hex)).joined(separator: " ").utf8) + [0x0A]
  }

  /// The request `line` (without its newline) holds, or nil if it is not one.
  init?(line: [UInt8]) {
    let words = line.split(separator: 0x20, omittingEmptySubsequences: false)
    guard words.count >= 2, let handover = RunHandover(String(decoding: words[0], as: UTF8.self)) else { return nil }
    var texts: [String] = []
    for word in words.dropFirst() {
      guard let bytes = Self.bytes(ofHex: word) else { return nil }
      texts.append(String(decoding: bytes, as: UTF8.self))
    }
    self.init(handover: handover, file: texts[0], arguments: Array(texts.dropFirst()))
  }

  /// A request for `handover` of `file` with `arguments`.
  init(handover: RunHandover, file: String, arguments: [String]) {
    self.handover = handover
    self.file = file
    self.arguments = arguments
  }

  /// The answer's line for a run that ended with `status`.
  static func reply(_ run: RunID, status: Int32) -> [UInt8] { Array("\(run.rawValue) \(status)\n".utf8) }

  /// The run and status a reply line (without its newline) holds.
  static func status(ofReply line: [UInt8]) -> (RunID, Int32)? {
    let words = line.split(separator: 0x20)
    guard words.count == 2, let run = Int64(String(decoding: words[0], as: UTF8.self)),
      let status = Int32(String(decoding: words[1], as: UTF8.self))
    else { return nil }
    return (RunID(run), status)
  }

  private static let digits = Array("0123456789abcdef".utf8)

  private static func hex(_ text: String) -> String {
    String(decoding: text.utf8.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
  }

  private static func bytes(ofHex word: ArraySlice<UInt8>) -> [UInt8]? {
    guard word.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(word.count / 2)
    var index = word.startIndex
    while index < word.endIndex {
      guard let high = digits.firstIndex(of: word[index]), let low = digits.firstIndex(of: word[index + 1]) else { return nil }
      bytes.append(UInt8(high << 4 | low))
      index += 2
    }
    return bytes
  }
}
