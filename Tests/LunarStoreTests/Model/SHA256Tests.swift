import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

@Suite struct SHA256Tests {
  @Test func knownVectors() {
    // FIPS 180-4 examples and the NIST one-million-'a' vector.
    #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(
      hex(
        SHA256.hash(
          Array(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
              .utf8)))
        == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    #expect(
      hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func agreesWithSha256sumOnRandomInputs() throws {
    // Lengths around the 55/56/64-byte padding edges, then random ones;
    // each also fed in random pieces, to cross block boundaries mid-update.
    var random = SystemRandomNumberGenerator()
    let lengths = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129] + (0..<27).map { _ in Int.random(in: 0..<5_000, using: &random) }
    let folder = try TemporaryFolder()
    var expected: [String: String] = [:]
    var files: [String] = []
    for (index, length) in lengths.enumerated() {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
      let path = folder.url.appendingPathComponent("input-\(index)").path
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      var hasher = SHA256()
      var rest = bytes[...]
      while !rest.isEmpty {
        let piece = Int.random(in: 1...max(1, rest.count), using: &random)
        hasher.update(rest.prefix(piece))
        rest = rest.dropFirst(piece)
      }
      let pieces = hex(hasher.finalize())
      #expect(pieces == hex(SHA256.hash(bytes)), "length \(length)")
      expected[path] = pieces
      files.append(path)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = files
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let lines = output.split(separator: "\n")
    #expect(lines.count == files.count)
    for line in lines {
      let parts = line.split(separator: " ", maxSplits: 1)
      let path = String(parts[1].drop { $0 == " " || $0 == "*" })
      #expect(expected[path] == String(parts[0]), "\(path)")
    }
  }

  @Test func fingerprintsFollowTheValuesNotTheirSpelling() throws {
    var a = LuaTable()
    var b = LuaTable()
    for i in 0..<50 { a[.string(LuaString("k\(i)"))] = .integer(Int64(i)) }
    for i in (0..<50).reversed() { b[.string(LuaString("k\(i)"))] = .integer(Int64(i)) }
    let first = try Fingerprint(of: ["uses", .table(a), .nil])
    #expect(first == (try Fingerprint(of: ["uses", .table(b), .nil])))
    #expect(first != (try Fingerprint(of: ["uses", .table(b)])))
    #expect(try Fingerprint(of: [.integer(1)]) != (try Fingerprint(of: [.number(1)])))
    #expect(try Fingerprint(of: ["e\u{301}"]) != (try Fingerprint(of: ["\u{E9}"])))
    #expect(first.hex.count == 64 && first.hex.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    #expect(Fingerprint(bytes: first.bytes) == first && Fingerprint(bytes: [1, 2]) == nil)
  }
}
