import Foundation
import Testing
import TestSupport

/// `lunar types [DIR]`: Lunar's Lua API as lua-language-server annotations,
/// the `.luarc.json` that points the server at them, and luacheck's standard.
/// lua-language-server is not installable here (not in Debian, no npm), so
/// the annotations are checked as Lua (`lunar check`) and against the running
/// API by `Tests/lua/types_drift.lua`; the luacheck standard is checked by
/// Debian's luacheck itself.
@Suite struct TypesCommandTests {
  static let drift = Repository.url("Tests/lua/types_drift.lua").path

  static let repository = Repository.root

  /// The annotation files `lunar types` wrote under `folder`, relative to it.
  static func annotations(in folder: URL) throws -> [String] {
    let root = folder.appendingPathComponent(".lunar/types")
    let found = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
    return found.filter { $0.hasSuffix(".lua") }.map { ".lunar/types/" + $0 }.sorted()
  }

  /// Runs the drift check over what `lunar types` wrote into `folder`.
  static func checkDrift(in folder: URL) async throws -> LunarProcess.Outcome {
    try await LunarProcess.run(
      ["run", "--clock", "virtual", drift, ".luacheckrc"] + annotations(in: folder), in: folder, timeout: 60)
  }

  @Test func writesTheAnnotationsTheServersConfigurationAndTheLintStandard() async throws {
    let folder = try TemporaryFolder()
    let outcome = try await LunarProcess.run(["types"], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "wrote .lunar/types/ (8 files), .luarc.json and .luacheckrc in .\n")
    let annotations = try Self.annotations(in: folder.url)
    #expect(annotations == [
      ".lunar/types/lunar.lua", ".lunar/types/lunar/actions.lua", ".lunar/types/lunar/launches.lua",
      ".lunar/types/lunar/machine.lua", ".lunar/types/lunar/queue.lua", ".lunar/types/lunar/repl.lua",
      ".lunar/types/lunar/trace.lua", ".lunar/types/lunar/workflow.lua",
    ])
    // Every file is Lua that compiles.
    let compiled = try await LunarProcess.run(["check", ".luacheckrc"] + annotations, in: folder.url)
    #expect(compiled.status == 0, "\(compiled.stderr)")
    // Each module's file is where `require` finds it on the server's path.
    for path in annotations {
      let text = try String(contentsOf: folder.url.appendingPathComponent(path), encoding: .utf8)
      let module = path.dropFirst(".lunar/types/".count).dropLast(".lua".count).replacingOccurrences(of: "/", with: ".")
      #expect(text.hasPrefix("---@meta \(module)\n"), "\(path)")
    }
    let data = try Data(contentsOf: folder.url.appendingPathComponent(".luarc.json"))
    let settings = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect((settings["runtime"] as? [String: Any])?["version"] as? String == "Lua 5.4")
    let library = (settings["workspace"] as? [String: Any])?["library"] as? [String] ?? []
    #expect(library.contains(".lunar/types"))
    #expect(library.contains("${3rd}/busted/library") && library.contains("${3rd}/luassert/library"))
    #expect((settings["diagnostics"] as? [String: Any])?["globals"] as? [String] == ["lunar"])
  }

  /// Every public function and field of every module, object and service
  /// is annotated, and every annotation names something that exists.
  @Test func theAnnotationsAndTheLintStandardMatchTheRunningAPI() async throws {
    let folder = try TemporaryFolder()
    let written = try await LunarProcess.run(["types"], in: folder.url)
    #expect(written.status == 0, "\(written.stderr)")
    let outcome = try await Self.checkDrift(in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    let last = try #require(lines.last)
    #expect(last.hasPrefix("types: ") && last.hasSuffix(" names checked, 0 problems"), "\(outcome.stdout)")
    let count = Int(last.dropFirst("types: ".count).prefix { $0.isNumber }) ?? 0
    #expect(count > 100, "\(last)")
  }

  /// The drift check finds what is missing and what is stale: a function,
  /// a property of a Swift object, a method, a module, a field of the lint
  /// standard.
  @Test func theDriftCheckNamesWhatIsMissingAndWhatIsStale() async throws {
    let folder = try TemporaryFolder()
    _ = try await LunarProcess.run(["types"], in: folder.url)
    func edit(_ path: String, _ change: (String) -> String) throws {
      let url = folder.url.appendingPathComponent(path)
      let text = try String(contentsOf: url, encoding: .utf8)
      let changed = change(text)
      #expect(changed != text, "\(path) unchanged")
      try Data(changed.utf8).write(to: url)
    }
    func dropLine(_ line: String) -> (String) -> String {
      { $0.replacingOccurrences(of: line + "\n", with: "") }
    }
    try edit(".lunar/types/lunar.lua") {
      dropLine("---@field label string Its name (`task 3`).")($0)
        .replacingOccurrences(of: "function lunar.sleep(seconds) end", with: "function lunar.snooze(seconds) end")
    }
    try edit(".lunar/types/lunar/machine.lua", dropLine("---@field stopped boolean"))
    try edit(".lunar/types/lunar/actions.lua", dropLine("function http:get(url, options) end"))
    try edit(".luacheckrc") { $0.replacingOccurrences(of: " set_limit = {},", with: "") }
    try FileManager.default.removeItem(at: folder.url.appendingPathComponent(".lunar/types/lunar/trace.lua"))
    let outcome = try await Self.checkDrift(in: folder.url)
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    for expected in [
      "missing: lunar.sleep has no annotation (class lunarlib)",
      "stale: lunar.snooze is annotated (class lunarlib) but does not exist",
      "missing: task.label has no annotation (class lunar.task)",
      "missing: machine.stopped has no annotation (class lunar.machine)",
      "missing: ctx.http.get has no annotation (class lunar.http_service)",
      "missing: module lunar.trace has no annotation file (---@meta lunar.trace)",
      "missing: luacheck's standard has no field lunar.actions.set_limit",
    ] {
      #expect(lines.contains(expected), "\(expected)\n\(outcome.stdout)")
    }
    #expect(lines.last?.hasSuffix(" problems") == true && lines.last?.hasSuffix(" 0 problems") == false)
  }

  /// luacheck, given the `.luacheckrc` `lunar types` writes, knows Lunar's
  /// fields, refuses writes to them, and gives spec files busted's globals.
  @Test func luacheckReadsTheStandard() async throws {
    let folder = try TemporaryFolder()
    _ = try await LunarProcess.run(["types"], in: folder.url)
    try folder.write("script.lua", """
      local q = lunar.queue.new("q")
      q:submit(function() lunar.sleep(1) end):await()
      print(lunar.launches.sources[1], lunar.version, lunar.workflow.step, lunar.cancelled)
      lunar.sleeep(1)
      lunar.version = "2"
      describe("not a spec", function() end)

      """)
    try folder.write("script_spec.lua", """
      local machine = require "lunar.machine"
      describe("a spec", function()
        it("sees busted's globals and lunar", function()
          assert.are.equal("function", type(machine.new))
          assert.is_number(lunar.now())
          local s = spy.new(function() end)
          s()
          assert.spy(s).was.called()
        end)
      end)

      """)
    let report = try await Luacheck.check(["script.lua", "script_spec.lua"], in: folder.url)
    let warnings = report.output.split(separator: "\n").map(String.init).filter { $0.contains(".lua:") }
    #expect(warnings == [
      "script.lua:4:1: accessing undefined field 'sleeep' of global 'lunar'",
      "script.lua:5:1: setting read-only field 'version' of global 'lunar'",
      "script.lua:6:1: accessing undefined variable 'describe'",
    ], "\(report.output)")
  }

  /// The globals `lunar test` adds to a spec's are busted's own (typed by
  /// the language server's busted and luassert libraries): luacheck's busted
  /// standard knows each of them.
  @Test func specGlobalsAreBustedsOwn() async throws {
    let folder = try TemporaryFolder()
    _ = try await LunarProcess.run(["types"], in: folder.url)
    let list = "for k in pairs(_G) do if type(k) == 'string' then f:write(k, '\\n') end end"
    try folder.write("globals_spec.lua", """
      it("lists the globals", function()
        local f = assert(io.open("spec_globals.txt", "w"))
        \(list)
        f:close()
      end)

      """)
    try folder.write("globals.lua", "local f = assert(io.open('run_globals.txt', 'w'))\n\(list)\nf:close()\n")
    let tested = try await LunarProcess.run(["test", "globals_spec.lua"], in: folder.url)
    #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
    let ran = try await LunarProcess.run(["run", "globals.lua"], in: folder.url)
    #expect(ran.status == 0, "\(ran.stderr)")
    func names(_ file: String) throws -> Set<String> {
      Set(try String(contentsOf: folder.url.appendingPathComponent(file), encoding: .utf8).split(separator: "\n").map(String.init))
    }
    let added = try names("spec_globals.txt").subtracting(try names("run_globals.txt")).sorted()
    #expect(added.contains("describe") && added.contains("it"), "\(added)")
    try folder.write("uses_spec.lua", "return {\n" + added.map { "  \($0),\n" }.joined() + "}\n")
    let report = try await Luacheck.check(["uses_spec.lua"], in: folder.url)
    #expect(report.status == 0, "\(report.output)")
  }

  /// The repository lints its own Lua with the very file `lunar types` writes.
  @Test func theRepositorysLuacheckrcIsTheOneLunarWrites() async throws {
    let folder = try TemporaryFolder()
    _ = try await LunarProcess.run(["types"], in: folder.url)
    let written = try Data(contentsOf: folder.url.appendingPathComponent(".luacheckrc"))
    let repositorys = try Data(contentsOf: Self.repository.appendingPathComponent(".luacheckrc"))
    #expect(written == repositorys)
  }

  @Test func rewritesItsOwnFilesAndNeverAnotherFile() async throws {
    let folder = try TemporaryFolder()
    let first = try await LunarProcess.run(["types", "project"], in: folder.url)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout == "wrote .lunar/types/ (8 files), .luarc.json and .luacheckrc in project\n")
    let again = try await LunarProcess.run(["types", "project/"], in: folder.url)
    #expect(again.status == 0, "\(again.stderr)")

    // A .luarc.json of the user's own: refused, and nothing is written.
    try folder.write("mine/.luarc.json", "{ \"runtime\": { \"version\": \"Lua 5.1\" } }\n")
    let refused = try await LunarProcess.run(["types", "mine"], in: folder.url)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("lunar: cannot open mine/.luarc.json: it exists and is not a .luarc.json written by lunar types"))
    #expect(refused.stderr.contains("add \".lunar/types\" to its workspace.library"))
    #expect(refused.stderr.hasSuffix("lunar: nothing was written\n"))
    #expect(try String(contentsOf: folder.url.appendingPathComponent("mine/.luarc.json"), encoding: .utf8)
      == "{ \"runtime\": { \"version\": \"Lua 5.1\" } }\n")
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("mine/.lunar").path))
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("mine/.luacheckrc").path))

    // A .luacheckrc, or an annotation file, the user changed is theirs.
    try folder.write("project/.luacheckrc", "std = 'max'\n")
    try folder.write("project/.lunar/types/lunar/trace.lua", "---@meta lunar.trace\n-- my own notes\n")
    let theirs = try await LunarProcess.run(["types", "project"], in: folder.url)
    #expect(theirs.status == 1)
    #expect(theirs.stderr.contains("cannot open project/.luacheckrc: it exists and is not a .luacheckrc written by lunar types"))
    #expect(theirs.stderr.contains("cannot open project/.lunar/types/lunar/trace.lua: it exists and is not"))
    #expect(try String(contentsOf: folder.url.appendingPathComponent("project/.luacheckrc"), encoding: .utf8) == "std = 'max'\n")
  }

  @Test func badArgumentsAreUsageErrors() async throws {
    let folder = try TemporaryFolder()
    try folder.write("file.lua", "print(1)\n")
    let two = try await LunarProcess.run(["types", "a", "b"], in: folder.url)
    #expect(two.status == 2)
    #expect(two.stderr == "lunar: types takes one DIR, got 2 operands\nTry 'lunar help types'.\n")
    let file = try await LunarProcess.run(["types", "file.lua"], in: folder.url)
    #expect(file.status == 2)
    #expect(file.stderr == "lunar: 'file.lua' is not a folder\nTry 'lunar help types'.\n")
    let flag = try await LunarProcess.run(["types", "--force"], in: folder.url)
    #expect(flag.status == 2)
    #expect(flag.stderr.hasPrefix("lunar: unknown option '--force' for 'lunar types'\n"))
    let help = try await LunarProcess.run(["help"], in: folder.url)
    #expect(help.stdout.contains("\n  types "))
  }
}
