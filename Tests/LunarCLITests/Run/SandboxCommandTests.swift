import Foundation
import Testing
import TestSupport

/// `lunar run --sandbox`: Lua source loads only from the script's folder
/// and the plugin path, a refusal never tells whether a file exists, and a
/// script chooses no file that Lunar reads or writes.
@Suite struct SandboxCommandTests {
  /// A project folder with a module, a plugin and a script, a file beside
  /// it (outside) and a symlink out of it.
  struct Project {
    let folder: TemporaryFolder
    var root: URL { folder.url }

    init() throws {
      folder = try TemporaryFolder()
      try folder.write("project/lib/inside.lua", "return 'inside'")
      try folder.write("project/plugins/plug.lua", "return 'plugin'")
      try folder.write("secret.lua", "return 'the secret'")
      try FileManager.default.createSymbolicLink(
        atPath: folder.url.appendingPathComponent("project/out").path, withDestinationPath: folder.url.path)
    }

    var project: URL { root.appendingPathComponent("project") }
    var secret: String { root.appendingPathComponent("secret.lua").path }
  }

  @Test func aSymlinkFlippedWhileLoadingNeverLetsAnOutsideFileIn() async throws {
    // Another process flips `link.lua` between a file inside and one
    // outside as fast as it can: the file opened is what is checked, so
    // not one of 30,000 loads (or more) reads the outside one (checking the name and
    // then opening it let 7-20 through).
    let project = try Project()
    let link = project.project.appendingPathComponent("link.lua").path
    try project.folder.write("project/main.lua", """
      local seen, loads = { inside = 0, refused = 0 }, 0
      while loads < 30000 or (seen.inside == 0 or seen.refused == 0) and loads < 3000000 do
        loads = loads + 1
        local chunk, message = loadfile("link.lua")
        local what = chunk and chunk() or (message:find("outside the sandbox", 1, true) and "refused" or message)
        seen[what] = (seen[what] or 0) + 1
      end
      print(seen["the secret"] or 0, seen.inside > 0, seen.refused > 0)
      """)
    let flipper = Process()
    flipper.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    flipper.arguments = ["-c", """
      import os, sys, time
      link, targets, spare = sys.argv[1], sys.argv[2:], sys.argv[1] + ".new"
      stop, end, i = link + ".stop", time.monotonic() + 300, 0
      while not (i % 1000 == 0 and (os.path.exists(stop) or time.monotonic() > end)):
          i += 1
          try: os.remove(spare)
          except FileNotFoundError: pass
          os.symlink(targets[i % 2], spare)
          os.replace(spare, link)
          if i == 1000: open(link + ".ready", "w").close()
      """, link, project.project.appendingPathComponent("lib/inside.lua").path, project.secret]
    try flipper.run()
    defer {
      // It stops at the stop file (or after 300 s), whatever else happens.
      _ = FileManager.default.createFile(atPath: link + ".stop", contents: nil)
      flipper.waitUntilExit()
    }
    // On a loaded machine the flipper can start after a whole loop has
    // run, so the loads begin once it has flipped a thousand times, and
    // they go on (up to 3,000,000) until both sides have been seen.
    let ready = link + ".ready"
    let started = ContinuousClock.now
    while !FileManager.default.fileExists(atPath: ready) && flipper.isRunning
      && ContinuousClock.now - started < .seconds(120) {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(FileManager.default.fileExists(atPath: ready), "the flipper is flipping")
    let outcome = try await LunarProcess.run(["run", "--sandbox", "main.lua"], in: project.project, timeout: 300)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "0\ttrue\ttrue\n", "outside loads, and whether both sides were seen: \(outcome.stdout)")
  }

  @Test func loadfileAndDofileReadOnlyInsideAndLeakNothing() async throws {
    let project = try Project()
    try project.folder.write("project/main.lua", """
      print(loadfile("/etc/passwd"))
      print(loadfile("/etc/no-such-file-here"))
      print(loadfile("\(project.secret)"))
      print(loadfile("lib/../../secret.lua"))
      print(loadfile("out/secret.lua"))
      print(pcall(dofile, "/etc/passwd"))
      print(loadfile("lib/inside.lua")())
      print(dofile("lib/inside.lua"))
      """)
    let outcome = try await LunarProcess.run(["run", "--sandbox", "main.lua"], in: project.project)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == """
      nil\tcannot open /etc/passwd (outside the sandbox)
      nil\tcannot open /etc/no-such-file-here (outside the sandbox)
      nil\tcannot open \(project.secret) (outside the sandbox)
      nil\tcannot open lib/../../secret.lua (outside the sandbox)
      nil\tcannot open out/secret.lua (outside the sandbox)
      false\tcannot open /etc/passwd (outside the sandbox)
      inside
      inside

      """)
    #expect(!outcome.stdout.contains("root"), "nothing of /etc/passwd")
    try project.folder.write("project/unsandboxed.lua", "print(loadfile('\(project.secret)')())")
    let unsandboxed = try await LunarProcess.run(["run", "unsandboxed.lua"], in: project.project)
    #expect(unsandboxed.stdout == "the secret\n", "without the sandbox files load as under lua5.4: \(unsandboxed.stderr)")
  }

  @Test func requireAndSearchpathNeverProbeOutside() async throws {
    let project = try Project()
    try project.folder.write("project/main.lua", """
      print(package.searchpath("passwd", "/etc/?"))
      print(package.searchpath("no-such-file-here", "/etc/?"))
      package.path = "/etc/?;\(project.root.path)/?.lua;./lib/?.lua;" .. package.path
      local ok, message = pcall(require, "passwd")
      print(ok, (message:gsub("\\n.*", "")))
      print(pcall(require, "secret"))
      print((require "inside"), (require "plug"))
      """)
    let outcome = try await LunarProcess.run(["run", "--sandbox", "main.lua"], in: project.project)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[0] == "nil\tno file '/etc/passwd' (outside the sandbox)")
    #expect(lines[1] == "nil\tno file '/etc/no-such-file-here' (outside the sandbox)")
    #expect(lines[2] == "false\tmodule 'passwd' not found:")
    #expect(outcome.stdout.contains("no file '\(project.secret)' (outside the sandbox)"))
    #expect(!outcome.stdout.contains("the secret"))
    #expect(lines.contains("inside\tplugin"))
  }

  @Test func aScriptCannotChooseTheJournalLunarWrites() async throws {
    let folder = try TemporaryFolder()
    let victim = try folder.write("victim.txt", "keep me\n")
    let chosen = folder.url.appendingPathComponent("chosen.jsonl").path
    let script = """
      local workflow = require "lunar.workflow"
      local wf = workflow "w" { workflow.step "a" { run = function() return 1 end } }
      print(pcall(workflow.execute, wf, { journal = "\(victim)" }))
      print(pcall(workflow.run, wf, { journal = "\(chosen)", quiet = true }))
      """
    let outcome = try await LunarProcess.run(["run", "--sandbox", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let refusal = "bad argument #2 to '%@' (option 'journal' is refused under --sandbox: only the command line (lunar run --journal) chooses the files Lunar writes)"
    #expect(outcome.stdout == "false\t" + refusal.replacingOccurrences(of: "%@", with: "execute") + "\nfalse\t"
      + refusal.replacingOccurrences(of: "%@", with: "run") + "\n")
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me\n")
    #expect(!FileManager.default.fileExists(atPath: chosen))
    // The command line still chooses it.
    let journal = folder.url.appendingPathComponent("runs.db").path
    let workflow = """
      local workflow = require "lunar.workflow"
      return workflow "w" { workflow.step "a" { run = function() return 1 end } }
      """
    let chosenByCommandLine = try await LunarProcess.run(["run", "--sandbox", "--journal", journal, "-"], input: workflow)
    #expect(chosenByCommandLine.status == 0, "\(chosenByCommandLine.stderr)")
    let header = try Data(contentsOf: URL(fileURLWithPath: journal)).prefix(16)
    #expect(header == Data("SQLite format 3\0".utf8), "the journal is a run store")
  }

  @Test func httpNeverReadsFilesWithOrWithoutTheSandbox() async throws {
    let folder = try TemporaryFolder()
    let secret = try folder.write("secret.txt", "the secret")
    let script = """
      lunar.action("get", { uses = { "http" } }, function(ctx, url) return ctx.http:get(url).body end)
      print(pcall(lunar.run, "get", "file://\(secret)"))
      local launches = require "lunar.launches"
      print(pcall(launches.configure, { endpoints = { ["rocketlaunch.live"] = "file://\(secret)" } }))
      """
    for flags in [["--sandbox"], []] {
      let outcome = try await LunarProcess.run(["run"] + flags + ["-"], input: script)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      #expect(!outcome.stdout.contains("the secret"))
      let lines = outcome.stdout.split(separator: "\n").map(String.init)
      #expect(lines.first == "false\tstdin:1: request to file://\(secret) failed: only http:// and https:// URLs are supported")
      if flags.isEmpty {
        #expect(lines.last == "true")
      } else {
        #expect(lines.last == "false\tbad argument #1 to 'lunar.launches.configure' (endpoints['rocketlaunch.live'] is a local file, refused under --sandbox)")
      }
    }
  }

  @Test func underTheSandboxOnlyTheCommandLineChoosesTheStore() async throws {
    let state = try TemporaryFolder()
    let elsewhere = state.url.appendingPathComponent("from-environment.db").path
    let workflow = """
      local workflow = require "lunar.workflow"
      return workflow "w" { workflow.step "a" { run = function() return 1 end } }
      """
    let outcome = try await LunarProcess.run(
      ["run", "--sandbox", "-"], input: workflow,
      environment: ["XDG_STATE_HOME": state.url.path, "LUNAR_STORE": "sqlite:" + elsewhere])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("[w] step a succeeded"))
    let written = try FileManager.default.contentsOfDirectory(atPath: state.url.path)
    #expect(written.isEmpty, "neither the default store nor LUNAR_STORE's was written: \(written)")
    let chosen = state.url.appendingPathComponent("chosen.db").path
    let recorded = try await LunarProcess.run(["run", "--sandbox", "--store", "sqlite:" + chosen, "-"], input: workflow)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    #expect(FileManager.default.fileExists(atPath: chosen), "--store chose it")
  }
}
