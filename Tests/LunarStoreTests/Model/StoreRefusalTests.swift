import Foundation
import Glibc
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// Every file in `folder` with its bytes (nil for what is not a regular file).
private func snapshot(_ folder: URL) throws -> [String: Data?] {
  var files: [String: Data?] = [:]
  for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
    let url = folder.appendingPathComponent(name)
    var isFolder: ObjCBool = false
    _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
    let type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
    files[name] = type == .typeRegular ? try Data(contentsOf: url) : nil
  }
  return files
}

/// What happens in a folder, as Linux's inotify reports it: which files were
/// opened for writing, created, changed or removed, whatever came back after.
private final class FolderWatch {
  private let fd: Int32

  init(_ folder: URL) throws {
    fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    let events = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM
    guard fd >= 0, inotify_add_watch(fd, folder.path, UInt32(events)) >= 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
  }

  /// The events so far, as "MASK name" lines.
  func events() -> [String] {
    var seen: [String] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { return seen }
      var offset = 0
      while offset < count {
        let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
        let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
        let name = String(decoding: buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
        seen.append("\(String(mask, radix: 16)) \(name)")
        offset += 16 + length
      }
    }
  }

  deinit { close(fd) }
}

/// Opens `name` in `folder` as a store, expecting a refusal with `message`
/// (`PATH` standing for the file's path), no file opened for writing,
/// created or removed (SQLite would make WAL files beside one it opened),
/// and no change at all in the folder.
private func expectRefusal(_ folder: TemporaryFolder, _ name: String, _ message: String) throws {
  let before = try snapshot(folder.url)
  let path = folder.url.appendingPathComponent(name).path
  let watch = try FolderWatch(folder.url)
  let error = #expect(throws: StoreError.self, "\(name)") { try SQLiteRunStore(path: path) }
  #expect(error?.kind == .notAStore)
  #expect(error?.message == message.replacingOccurrences(of: "PATH", with: path))
  #expect(watch.events() == [], "\(name): the folder saw writes")
  #expect(try snapshot(folder.url) == before, "\(name) or a file beside it changed")
}

/// A SQLite database of another program, made through SQLite itself, in WAL
/// mode as many programs use it, closed so only the database file remains.
private func foreignDatabase(at path: String, applicationID: Int32) throws {
  let db = try SQLiteDatabase(path: path)
  try db.execute(
    """
    PRAGMA journal_mode = WAL; PRAGMA application_id = \(applicationID);
    CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');
    """)
}

@Suite struct StoreRefusalTests {
  @Test func aFileThatIsNotALunarStoreIsRefusedAndLeftUntouched() throws {
    let folder = try TemporaryFolder()
    try folder.write("notes.txt", "not a database\n" + String(repeating: "x", count: 200))
    try folder.write("short.db", "SQLite format 3\0 but cut short")
    try foreignDatabase(at: folder.url.appendingPathComponent("other.db").path, applicationID: 0x1234_5678)
    try foreignDatabase(at: folder.url.appendingPathComponent("plain.db").path, applicationID: 0)
    try FileManager.default.createDirectory(at: folder.url.appendingPathComponent("folder.db"), withIntermediateDirectories: false)
    #expect(mkfifo(folder.url.appendingPathComponent("pipe.db").path, 0o600) == 0)
    #expect(try snapshot(folder.url).keys.sorted() == ["folder.db", "notes.txt", "other.db", "pipe.db", "plain.db", "short.db"])

    let notSQLite = "PATH is not a Lunar store (it is not a SQLite database); Lunar leaves it untouched"
    let otherApplication = "PATH is not a Lunar store (it is a SQLite database of another application); Lunar leaves it untouched"
    try expectRefusal(folder, "notes.txt", notSQLite)
    try expectRefusal(folder, "short.db", notSQLite)
    try expectRefusal(folder, "other.db", otherApplication)
    try expectRefusal(folder, "plain.db", otherApplication)
    try expectRefusal(folder, "folder.db", "PATH is a folder, not a Lunar store; Lunar leaves it untouched")
    try expectRefusal(folder, "pipe.db", "PATH is not a regular file, not a Lunar store; Lunar leaves it untouched")
    // Through a location too, as the command line will open it.
    let location = try StoreLocation(parsing: "sqlite:other.db", currentFolder: folder.url.path)
    #expect(throws: StoreError.self) { try location.openRunStore() }
    let db = try SQLiteDatabase(path: folder.url.appendingPathComponent("other.db").path, flags: .readOnly)
    #expect(try db.scalar("SELECT body FROM notes") == .text("keep me"))
  }

  @Test func anEmptyFileBecomesAStore() throws {
    let folder = try TemporaryFolder()
    let path = try folder.write("runs.db", "")
    let store = try SQLiteRunStore(path: path)
    let run = try store.beginRun(NewRun(workflow: "w", file: "w.lua"))
    #expect(try SQLiteRunStore(path: path).run(run)?.workflow == "w")
  }

  @Test func aDatabaseThatOnlyClaimsLunarsIdIsRefusedUnchanged() throws {
    // Its header passes the check, but it holds another program's tables and
    // no store version: Lunar must not add its own tables to it.
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("odd.db").path
    let db = try SQLiteDatabase(path: path)
    try db.execute("PRAGMA application_id = \(StoreFileCheck.applicationID); CREATE TABLE notes (body TEXT)")
    let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: path) }
    #expect(error?.kind == .notAStore)
    #expect(try db.scalar("SELECT group_concat(name) FROM sqlite_schema") == .text("notes"))
  }
}
