import Foundation
import Testing
import TestSupport

/// The shared libraries `lunar` loads when it starts: only those every
/// command may need. A library one command needs (libpq for a PostgreSQL
/// store, libsqlite3 for a SQLite one, libcurl for HTTP, libedit for the
/// console, libmicrohttpd for a web server) is opened by that command, so starting `lunar` never pays
/// for loading it and the libraries it pulls in.
@Suite struct StartupLibrariesTests {
  /// The libraries the binary's dynamic section names (`DT_NEEDED`), which
  /// the loader maps before `main`; the debug binary names the same ones.
  static func neededLibraries() async throws -> [String] {
    let outcome = try await ProgramRun.run("/usr/bin/readelf", ["--dynamic", "--wide", LunarProcess.binary])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    // Lines such as " 0x...1 (NEEDED)  Shared library: [libc.so.6]".
    return outcome.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
      guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
      return String(line[line.index(after: open)..<close])
    }
  }

  @Test func theBinaryNamesNoLibraryThatOnlyOneCommandNeeds() async throws {
    let needed = try await Self.neededLibraries()
    // Lua itself is always there: the check reads the right section.
    #expect(needed.contains { $0.hasPrefix("liblua5.4") }, "\(needed)")
    for library in ["libpq", "libsqlite3", "libcurl", "libedit", "libmicrohttpd"] {
      #expect(!needed.contains { $0.hasPrefix(library + ".") }, "lunar links \(library) at start-up: \(needed)")
    }
  }

  @Test func withoutLibpqLunarStillStartsAndAPostgresStoreSaysWhatIsMissing() async throws {
    // A file the loader finds first by the name libpq5's library has, and
    // cannot load: as if libpq5 were not installed.
    let folder = try TemporaryFolder()
    _ = FileManager.default.createFile(atPath: folder.url.appendingPathComponent("libpq.so.5").path, contents: Data())
    let environment = ["LD_LIBRARY_PATH": folder.url.path]

    let version = try await LunarProcess.run(["version"], environment: environment)
    #expect(version.status == 0 && version.stdout.hasPrefix("lunar "), "\(version.stderr)")

    let url = "postgresql://lunar@/lunar?host=/nonexistent&port=5432"
    for arguments in [["runs", "--store", url], ["queue", "ls", "--store", url]] {
      let outcome = try await LunarProcess.run(arguments, environment: environment)
      #expect(outcome.status == 1, "\(arguments): \(outcome.stderr)")
      let lines = outcome.stderr.split(separator: "\n")
      #expect(lines.count == 1, "\(arguments): \(outcome.stderr)")
      #expect(
        outcome.stderr.hasPrefix("lunar: PostgreSQL store needs libpq5 (cannot load libpq.so.5: "),
        "\(arguments): \(outcome.stderr)")
    }
  }

  @Test func withoutLibsqlite3AScriptStillRunsAndASQLiteStoreSaysWhatIsMissing() async throws {
    // As above: a file by libsqlite3-0's name that cannot be loaded.
    let folder = try TemporaryFolder()
    _ = FileManager.default.createFile(atPath: folder.url.appendingPathComponent("libsqlite3.so.0").path, contents: Data())
    let environment = ["LD_LIBRARY_PATH": folder.url.path]

    let script = folder.url.appendingPathComponent("plain.lua")
    try Data("print('plain ' .. _VERSION)\n".utf8).write(to: script)
    let plain = try await LunarProcess.run(["run", script.path], environment: environment)
    #expect(plain.status == 0 && plain.stdout == "plain Lua 5.4\n", "\(plain.stderr)")

    // A store that exists (one that does not is read as empty, unopened).
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let workflow = folder.url.appendingPathComponent("one.lua")
    try Data("local w = require 'lunar.workflow'\nreturn w 'one' { w.step 'only' { run = function() end } }\n".utf8)
      .write(to: workflow)
    let made = try await LunarProcess.run(["run", "--store", store, workflow.path])
    #expect(made.status == 0, "\(made.stderr)")
    for arguments in [["runs", "--store", store], ["queue", "ls", "--store", store]] {
      let outcome = try await LunarProcess.run(arguments, environment: environment)
      #expect(outcome.status == 1, "\(arguments): \(outcome.stderr)")
      #expect(outcome.stderr.split(separator: "\n").count == 1, "\(arguments): \(outcome.stderr)")
      #expect(
        outcome.stderr.contains(": SQLite store needs libsqlite3-0 (cannot load libsqlite3.so.0: "),
        "\(arguments): \(outcome.stderr)")
    }
  }

  @Test func withoutLibmicrohttpdServeSaysWhatIsMissing() async throws {
    let folder = try TemporaryFolder()
    _ = FileManager.default.createFile(atPath: folder.url.appendingPathComponent("libmicrohttpd.so.12").path, contents: Data())
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let outcome = try await LunarProcess.run(
      ["serve", "--store", store, "--listen", "127.0.0.1:0"], environment: ["LD_LIBRARY_PATH": folder.url.path])
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: serve: needs libmicrohttpd12 (cannot load libmicrohttpd.so.12: "), "\(outcome.stderr)")
  }
}
