import Foundation
import LuaKit
import Synchronization
import Testing
import TestSupport

@testable import Lunar

/// Reading with a bound, writing without truncating or overwriting what is
/// not Lunar's, and a run that ends when its trace cannot be written.
@Suite struct FileIOTests {
  @Test func theReaderReadsRegularFilesWholeAndNothingElse() throws {
    let folder = try TemporaryFolder()
    let path = try folder.write("data.json", String(repeating: "x", count: 100_000))
    #expect(try BoundedFileReader.read(path).count == 100_000)
    #expect(throws: BoundedFileReader.ReadError(path: path, reason: .tooLarge(limit: 1024))) {
      try BoundedFileReader.read(path, limit: 1024)
    }
    let fifo = folder.url.appendingPathComponent("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    for (path, kind) in [("/dev/zero", "a character device"), (fifo, "a FIFO"), (folder.url.path, "a folder")] {
      #expect(throws: BoundedFileReader.ReadError(path: path, reason: .notRegular(kind))) { try BoundedFileReader.read(path) }
    }
    #expect(throws: BoundedFileReader.ReadError(path: "/nonexistent/x", reason: .missing)) {
      try BoundedFileReader.read("/nonexistent/x")
    }
  }

  static let journalKind = FileOutput.Kind.starting(with: [#"{"kind":"#], name: "a Lunar journal")

  @Test func anOutputReplacesItsOwnKindAndRefusesAnythingElse() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("run.jsonl").path
    try FileOutput(path: path, kind: Self.journalKind, contents: Array(#"{"kind":"first"}"#.utf8)).write("\n")
    let copy = folder.url.appendingPathComponent("copy.jsonl").path
    #expect(link(path, copy) == 0)
    try FileOutput(path: path, kind: Self.journalKind).write(#"{"kind":"second"}"#)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == #"{"kind":"second"}"#)
    #expect(try String(contentsOfFile: copy, encoding: .utf8) == "{\"kind\":\"first\"}\n", "replaced, not truncated")
    let notes = try folder.write("notes.txt", "mine")
    #expect(throws: FileOutput.OpenError.self) { try FileOutput(path: notes, kind: Self.journalKind) }
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "mine")
    let empty = try folder.write("empty.jsonl", "")
    try FileOutput(path: empty, kind: Self.journalKind).write(#"{"kind":"x"}"#)
    #expect(try String(contentsOfFile: empty, encoding: .utf8) == #"{"kind":"x"}"#)
  }

  @Test func aFailedWriteIsThrownEveryTimeAndReportedOnce() throws {
    let output = try FileOutput(path: "/dev/full", kind: Self.journalKind)
    let reports = Mutex<[String]>([])
    output.whenWriteFails { error in reports.withLock { $0.append(error.description) } }
    for _ in 1...3 {
      #expect(throws: FileOutput.WriteError(path: "/dev/full", reason: "No space left on device")) { try output.write("x\n") }
    }
    #expect(reports.withLock { $0 } == ["cannot write /dev/full: No space left on device"])
  }

  @Test func aTraceThatCannotBeWrittenEndsTheRun() async throws {
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: 0)
    configuration.traceSinks = [try JSONLinesTraceSink(path: "/dev/full")]
    let runtime = try Runtime(configuration)
    let failure: RunFailure?
    do {
      _ = try await runtime.run(Script(source: .text("for i = 1, 10 do lunar.sleep(1) end", chunkName: "=t")))
      failure = nil
    } catch {
      failure = error
    }
    #expect(failure?.luaMessage == "cannot write /dev/full: No space left on device")
  }

  @Test func sandboxFoldersResolveDotsAndLinksBeforeDeciding() throws {
    let folder = try TemporaryFolder()
    let project = folder.url.appendingPathComponent("project").path
    try folder.write("project/lib/m.lua", "return 1")
    try folder.write("secret.lua", "return 2")
    try FileManager.default.createSymbolicLink(atPath: project + "/out", withDestinationPath: folder.url.path)
    let folders = SandboxFolders()
    folders.allowFolder(of: Array((project + "/main.lua").utf8))
    func allows(_ path: String) -> Bool { folders.allows(Array(path.utf8)) }
    #expect(allows(project + "/lib/m.lua"))
    #expect(allows(project + "/lib/not-yet.lua"))
    #expect(allows(project + "/lib/../lib/m.lua"))
    #expect(!allows(project + "/../secret.lua"))
    #expect(!allows(project + "/lib/../../secret.lua"))
    #expect(!allows(project + "/out/secret.lua"), "a symlink out of the folder is outside")
    #expect(!allows(project + "/out/no-such-file.lua"), "and says so whether or not the file exists")
    #expect(!allows("/etc/passwd"))
    #expect(allows(project + "/lib/m.lua\0/../../../etc/passwd"), "a path ends at its first zero byte, as fopen reads it")
    #expect(!allows(project + "x/m.lua"), "a sibling sharing the folder's name as a prefix is outside")
    let (found, message) = folders.searchPath(
      name: Array("secret".utf8), templates: Array((folder.url.path + "/?.lua;" + project + "/lib/?.lua").utf8),
      separator: Array(".".utf8), replacement: Array("/".utf8))
    #expect(found == nil)
    #expect(String(decoding: message, as: UTF8.self) == """
      no file '\(folder.url.path)/secret.lua' (outside the sandbox)
      \tno file '\(project)/lib/secret.lua'
      """)
  }
}
