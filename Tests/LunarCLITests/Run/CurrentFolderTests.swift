import Foundation
import Testing
import TestSupport

/// `lunar.cwd()`: the current folder as the system has it.
@Suite struct CurrentFolderTests {
  @Test func aRemovedFolderIsAnErrorAsIoGivesOne() async throws {
    let folder = try TemporaryFolder()
    try folder.write("gone/.keep", "")
    let gone = folder.url.appendingPathComponent("gone")
    try FileManager.default.removeItem(at: gone.appendingPathComponent(".keep"))
    let outcome = try await LunarProcess.run(["run", "-"], input: """
      local here = lunar.cwd()
      print(here:sub(-5))
      assert(os.remove(here))
      print(lunar.cwd())
      """, in: gone)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "/gone\nnil\tNo such file or directory\t2\n")
  }

  @Test func thePathKeepsItsBytes() async throws {
    let folder = try TemporaryFolder()
    // A folder named "l\xFF": not UTF-8, so only its bytes can name it.
    let name = Array(folder.url.path.utf8) + [UInt8(ascii: "/"), UInt8(ascii: "l"), 0xFF, 0]
    func withPath<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
      bytes.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }
    #expect(withPath(name) { mkdir($0, 0o755) } == 0)
    // Foundation may not remove what it cannot name: removed here.
    defer {
      _ = withPath(name.dropLast() + Array("/x".utf8) + [0]) { unlink($0) }
      _ = withPath(name) { rmdir($0) }
    }
    let output = try TemporaryFolder()
    let script = try output.write("cwd.lua", "local here = lunar.cwd(); print(here:byte(-2, -1)); print(io.open(here .. '/x', 'w') ~= nil)")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", #"cd "$(printf 'l\377')" && exec "$0" run "$1" > "$2""#, LunarProcess.binary, script, output.url.path + "/out"]
    process.currentDirectoryURL = folder.url
    try process.run()
    await ChildProcess.wait(for: process)
    #expect(process.terminationStatus == 0)
    #expect(String(decoding: try Data(contentsOf: output.url.appendingPathComponent("out")), as: UTF8.self) == "108\t255\ntrue\n")
  }
}
