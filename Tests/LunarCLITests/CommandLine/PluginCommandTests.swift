import Foundation
import Testing
import TestSupport

/// Plugins found on the plugin path, loaded by the first action that needs them.
@Suite struct PluginCommandTests {
  /// A Lua plugin `notes`: two actions and a counter of how often it loaded.
  static let notesPlugin = """
    loads = (loads or 0) + 1
    local notes = { kept = {} }
    lunar.action("notes.add", function(ctx, input)
      notes.kept[#notes.kept + 1] = input.text
      return #notes.kept
    end)
    lunar.action("notes.list", function() return table.concat(notes.kept, ", ") end)
    return notes
    """

  /// A workflow whose steps use the plugin's actions without requiring it.
  static let workflow = """
    local workflow = require "lunar.workflow"
    return workflow "notes" {
      workflow.step "first" { uses = "notes.add", with = { text = "one" } },
      workflow.step "second" { needs = { "first" }, uses = "notes.add", with = { text = "two" } },
      workflow.step "show" { needs = { "second" }, run = function() print(lunar.run("notes.list"), loads) end },
    }
    """

  @Test func aStepLoadsTheLuaPluginThatProvidesItsAction() async throws {
    let folder = try TemporaryFolder()
    try folder.write("extra/notes/init.lua", Self.notesPlugin)
    let script = try folder.write("flow.lua", Self.workflow)
    let outcome = try await LunarProcess.run(["run", "--plugin-dir", folder.url.appendingPathComponent("extra").path, script])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("one, two\t1\n"), "loaded once, on first use")
    #expect(outcome.stdout.contains("workflow notes: succeeded"))
  }

  @Test func lunarRunLoadsThePluginFromLunarPath() async throws {
    let folder = try TemporaryFolder()
    try folder.write("lib/notes.lua", Self.notesPlugin)
    let outcome = try await LunarProcess.run(
      ["run", "-"], input: "lunar.run('notes.add', { text = 'x' }); print(lunar.run('notes.list'), loads)",
      environment: ["LUNAR_PATH": folder.url.appendingPathComponent("lib").path])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "x\t1\n")
  }

  @Test func pluginsBesideTheScriptAreFoundFromAnywhere() async throws {
    let folder = try TemporaryFolder()
    try folder.write("project/plugins/notes/init.lua", Self.notesPlugin)
    try folder.write("project/flow.lua", Self.workflow)
    try folder.write("elsewhere/.keep", "")
    let outcome = try await LunarProcess.run(["run", "../project/flow.lua"], in: folder.url.appendingPathComponent("elsewhere"))
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("one, two\t1\n"))
    let sandboxed = try await LunarProcess.run(["run", "--sandbox", "../project/flow.lua"], in: folder.url.appendingPathComponent("elsewhere"))
    #expect(sandboxed.status == 0, "\(sandboxed.stderr)")
  }

  @Test func aPluginThatFailsToLoadIsReportedWithItsError() async throws {
    let folder = try TemporaryFolder()
    try folder.write("plugins/broken.lua", "local x = nil\nreturn x.field")
    let outcome = try await LunarProcess.run(
      ["run", "-"], input: "print(pcall(lunar.run, 'broken.go'))\nprint(pcall(lunar.run, 'absent.go'))\nprint(pcall(lunar.run, 'plain'))",
      in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "false\tunknown action 'broken.go': plugin 'broken' failed to load: ./plugins/broken.lua:2: attempt to index a nil value (local 'x')")
    #expect(lines.contains("false\tunknown action 'absent.go': no plugin 'absent' provides it (module 'absent' not found:"))
    #expect(lines.contains("\tno file './plugins/absent.lua'"))
    #expect(lines.last == "false\tunknown action 'plain'")
  }

  @Test func anActionLoadsTheSwiftPluginThatProvidesIt() async throws {
    // `launches.upcoming` belongs to the Swift plugin `lunar.launches`,
    // which this script never requires.
    let sample = Repository.url("Sources/LunarLaunches/Samples/rocketlaunch-live.json")
    let outcome = try await LunarProcess.run(["run", "-"], input: """
      local workflow = require "lunar.workflow"
      return workflow "w" {
        workflow.step "fetch" { uses = "launches.upcoming", with = { source = "rocketlaunch.live", limit = 2 } },
        workflow.step "count" { needs = { "fetch" }, run = function(ctx) print(#ctx.steps.fetch.output, package.loaded["lunar.launches"] ~= nil) end },
      }
      """, environment: ["LUNAR_LAUNCHES_RLL_URL": sample.absoluteString, "LUNAR_LAUNCHES_LIVE": "0"])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("2\ttrue\n"))
  }
}
