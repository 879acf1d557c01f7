import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar run` and `lunar runs` with a PostgreSQL store, on the throwaway
/// server `scripts/test` starts; skipped (visibly) without one.
@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresStoreCommandTests {
  /// Three steps in a chain; each appends its name to `log` and returns a
  /// value that tells kinds apart.
  static func script(log: String) -> String {
    """
    local workflow = require "lunar.workflow"
    local function ran(name)
      local f = assert(io.open("\(log)", "a"))
      f:write(name, "\\n")
      f:close()
    end
    return workflow "pg-chain" {
      workflow.step "fetch" { run = function() ran("fetch"); return { "\\0\\255", 2.5, 3 } end },
      workflow.step "build" { needs = { "fetch" }, run = function(ctx) ran("build"); return 7 end },
      workflow.step "notify" { needs = { "build" }, run = function() ran("notify") end },
    }
    """
  }

  @Test func runsAreRecordedResumedAndListed() async throws {
    let schema = try TestPostgresSchema()
    let folder = try TemporaryFolder()
    let log = folder.url.appendingPathComponent("ran.txt").path
    let script = try folder.write("chain.lua", Self.script(log: log))

    let first = try await LunarProcess.run(["run", "--store", schema.url, script])
    #expect(first.status == 0, "\(first.stderr)")
    let resumed = try await LunarProcess.run(["run", "--store", schema.url, "--resume", script])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    for name in ["fetch", "build", "notify"] { #expect(resumed.stdout.contains("step \(name) reused"), "\(resumed.stdout)") }
    // Every step ran once: the resume took all three from the store.
    #expect(try String(contentsOfFile: log, encoding: .utf8) == "fetch\nbuild\nnotify\n")

    let store = try PostgresRunStore(url: schema.url, location: "test", createIfMissing: false)
    let last = try #require(try store.lastRun(workflow: LuaString("pg-chain"), file: nil))
    #expect(last.status == .succeeded && last.resumedFrom != nil)
    let steps = try store.steps(of: last.id)
    #expect(steps.map(\.status) == [.reused, .reused, .reused])
    #expect(steps[0].output == [.table(LuaTable(array: [.string(LuaString(bytes: [0, 0xFF])), .number(2.5), .integer(3)]))])

    let list = try await LunarProcess.run(["runs", "--store", schema.url])
    #expect(list.status == 0, "\(list.stderr)")
    let rows = list.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ").map(String.init) }
    // id, workflow, status, date, time, duration, succeeded, failed, skipped, reused
    #expect(rows.map { [$0[1], $0[2]] + $0[6...] } == [
      ["pg-chain", "succeeded", "0", "0", "0", "3"], ["pg-chain", "succeeded", "3", "0", "0", "0"],
    ])
    let show = try await LunarProcess.run(["runs", "show", "last", "--store", schema.url])
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.contains("build") && show.stdout.contains("reused"), "\(show.stdout)")
  }

  @Test func readingAnEmptySchemaCreatesNothing() async throws {
    let schema = try TestPostgresSchema()
    let location = StoreLocation(.postgres(url: schema.url))
    let list = try await LunarProcess.run(["runs", "--store", schema.url])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout == "no runs recorded yet in \(location)\n")
    #expect(try schema.query("SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema.name)'") == ["0"])
  }
}

/// Store URLs that are malformed or name a server that cannot be reached:
/// one line each, before anything runs. Needs no server.
@Suite struct PostgresStoreFailureCommandTests {
  @Test func aMalformedURLIsAUsageError() async throws {
    for command in ["run", "runs"] {
      let outcome = try await LunarProcess.run(
        [command, "--store", "postgres://u:secret@db/runs?colour=blue"] + (command == "run" ? ["-"] : []), input: "print('ran')")
      #expect(outcome.status == 2, "\(command)")
      #expect(
        outcome.stderr
          == "lunar: --store: 'postgres://u:***@db/runs?colour=blue' is not a PostgreSQL URL: invalid URI query parameter: \"colour\"\nTry 'lunar help \(command)'.\n"
      )
      #expect(outcome.stdout.isEmpty)
    }
  }

  @Test func anUnreachableServerIsOneLine() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("w.lua", "local w = require 'lunar.workflow'\nreturn w 'w' { w.step 'a' { run = function() print('ran') end } }")
    // Port 1 on the loopback: nothing listens there.
    let url = "postgres://lunar:secret@127.0.0.1:1/runs"
    let expected =
      "lunar: cannot connect to store postgres://lunar:***@127.0.0.1:1/runs: connection to server at \"127.0.0.1\", port 1 failed: Connection refused"
    for arguments in [["run", "--store", url, script], ["runs", "--store", url]] {
      let outcome = try await LunarProcess.run(arguments)
      #expect(outcome.status == 1, "\(arguments)")
      let lines = outcome.stderr.split(separator: "\n")
      #expect(lines.count == 1, "\(outcome.stderr)")
      #expect(outcome.stderr.hasPrefix(expected), "\(outcome.stderr)")
      #expect(!outcome.stderr.contains("secret") && !outcome.stdout.contains("ran"))
    }
  }
}
