import Foundation
import Testing
import TestSupport

/// The examples in `examples/` are part of the product: each must run.
@Suite struct ExampleTests {
  static let examples = Repository.url("examples")

  @Test func helloGreetsByName() async throws {
    let outcome = try await LunarProcess.run(["run", "hello.lua", "Ada"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "hello, Ada, from Lua 5.4\narg[0] = hello.lua, 1 argument(s)\n")
  }
}

extension ExampleTests {
  @Test func tasksRunConcurrently() async throws {
    let outcome = try await LunarProcess.run(["run", "tasks.lua"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.prefix(4) == [
      "tea ready after 3 min\tcoffee ready after 5 min",
      "1\trice ready after 12 min",
      "false\ttasks.lua:23: toast burnt",
      "cancelled\ttrue",
    ])
    #expect(lines.last?.hasPrefix("all done in ") == true)
  }
}

extension ExampleTests {
  @Test func kitchenSpecsPass() async throws {
    let outcome = try await LunarProcess.run(["test", "specs"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stdout)")
    #expect(outcome.stdout.hasSuffix("4 passed, 0 failed, 0 errors, 0 pending\n"))
  }
}

extension ExampleTests {
  @Test func queueRunsJobsInOrder() async throws {
    let outcome = try await LunarProcess.run(["run", "queue.lua"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == """
      9\t25
      false\tqueue.lua:11: bad input
      slow\tcancelled
      false\tmigration failed
      cancelled\t0\tstop

      """)
  }
}

extension ExampleTests {
  @Test func machineDrivesTheListScreen() async throws {
    let outcome = try await LunarProcess.run(["run", "machine.lua"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(lines[0].hasPrefix("loading\ttable: "))
    #expect(Array(lines[1...]) == ["showing item 1 of 20, item 2 of 20, item 3 of 20", "state: presenting", "state: initial"])
    let graph = try await LunarProcess.run(["graph", "machine.lua"], in: Self.examples)
    #expect(graph.stdout.contains("  presenting --> initial : expire\n"))
  }
}

extension ExampleTests {
  @Test func blinkStartsInItsInitialStateAndStopsAfterThreeBlinks() async throws {
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "blink.lua"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == """
      0.00s  off
      0.25s  on
      0.50s  off
      0.75s  on
      1.00s  off
      1.25s  on
      1.50s  off
      1.50s  stopped

      """)
    let graph = try await LunarProcess.run(["graph", "blink.lua"], in: Self.examples)
    #expect(graph.status == 0, "\(graph.stderr)")
    #expect(graph.stdout.contains("  [*] --> off\n  off --> stopped : shown\n  off --> on : switch\n  on --> off : switch\n"))
  }
}

extension ExampleTests {
  @Test func actionsRunAndReplay() async throws {
    let folder = try TemporaryFolder()
    let journal = folder.url.appendingPathComponent("run.journal").path
    let recorded = try await LunarProcess.run(["run", "--record", journal, "actions.lua"], in: Self.examples)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    #expect(recorded.stdout == "Ada\ntoken tok-4711\nTest\t2 actions ran: login, store_token\n")
    #expect(recorded.stderr == "info: logged in as Ada\ninfo: logged in as Test\n")
    let replayed = try await LunarProcess.run(["run", "--replay", journal, "actions.lua"], in: Self.examples)
    #expect(replayed.stdout == recorded.stdout, "\(replayed.stderr)")
  }
}

extension ExampleTests {
  @Test func nextLaunchWorksOfflineOnTheSamples() async throws {
    let outcome = try await LunarProcess.run(["run", "next_launch.lua"], in: Self.examples, environment: ["LUNAR_LAUNCHES_LIVE": "0"])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first?.hasPrefix("launch ") == true)
    #expect(lines.count >= 6)
    #expect(lines.last?.hasPrefix("next: ") == true)
  }
}

extension ExampleTests {
  @Test func theReportPluginPrintsAndSends() async throws {
    let server = try TestHTTPServer { _ in .init(body: "{\"ok\":true}") }
    defer { server.stop() }
    // Run from the repository's root: the plugin is found beside the script.
    let outcome = try await LunarProcess.run(["run", "examples/launch_report.lua"], in: Self.examples.deletingLastPathComponent(),
      environment: ["LUNAR_LAUNCHES_LIVE": "0"])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("\nnext: "))
    let sent = try await LunarProcess.run(["run", "--plugin-dir", Self.examples.appendingPathComponent("plugins").path, "-"], input: """
      print(lunar.run("report.send", { url = "\(server.url)/hook", title = "launches", lines = { "a", "b" } }).ok)
      """)
    #expect(sent.status == 0, "\(sent.stderr)")
    #expect(sent.stdout == "true\n")
    #expect(server.requests.map(\.path) == ["/hook"])
    #expect(server.requests.first?.body == #"{"text":"launches\n  a\n  b"}"#)
  }
}

extension ExampleTests {
  @Test func resumeRunsTheFailedStepAndReusesTheRest() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let first = try await LunarProcess.run(["run", "--store", store, "resume.lua"], in: Self.examples)
    #expect(first.status == 1)
    #expect(first.stdout.contains("[resume] step publish failed: the release server is down (set PUBLISH=1)"))
    let second = try await LunarProcess.run(
      ["run", "--store", store, "--resume", "resume.lua"], in: Self.examples, environment: ["PUBLISH": "1"])
    #expect(second.status == 0, "\(second.stderr)")
    #expect(!second.stdout.contains("building"), "the expensive step was reused")
    #expect(second.stdout.contains("[resume] step build reused"))
    #expect(second.stdout.contains("published 1.4.2"))
    // What the failed run's publish step printed, attempt by attempt.
    let logs = try await LunarProcess.run(["runs", "logs", "--store", store, "1", "publish"], in: Self.examples)
    #expect(logs.status == 0, "\(logs.stderr)")
    #expect(
      logs.stdout
        == "==> step publish, attempt 1 <==\npublishing 1.4.2\n==> step publish, attempt 2 <==\npublishing 1.4.2\n")
    let runs = try await LunarProcess.run(["runs", "--store", store], in: Self.examples)
    let lines = runs.stdout.split(separator: "\n")
    #expect(lines.count == 3, "a header and two runs")
    #expect(lines.dropFirst().first?.contains("succeeded") == true, "newest first")
  }
}

extension ExampleTests {
  /// The README's workflow is `hello_pipeline.lua`, word for word, and it
  /// runs: the queue keeps its two steps in order and the retry saves the
  /// step that fails once.
  @Test func theReadmesWorkflowRuns() async throws {
    let file = Self.examples.appendingPathComponent("hello_pipeline.lua")
    let source = try String(contentsOf: file, encoding: .utf8)
    let readme = try String(
      contentsOf: Self.examples.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
    #expect(readme.contains("```lua\n" + source + "```\n"), "the README shows examples/hello_pipeline.lua as it is")
    let outcome = try await LunarProcess.run(["run", "--no-store", "hello_pipeline.lua"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("hello, Ada; hello, Grace\n"))
    #expect(outcome.stdout.contains("step report attempt 1 failed: hello_pipeline.lua:18: the printer is warming up; retrying\n"))
    #expect(outcome.stdout.contains("workflow hello-pipeline: succeeded in "))
  }

  @Test func aFixedStepRerunsOnResumeWithWhatNeedsItAndSaysWhy() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let example = try String(contentsOf: Self.examples.appendingPathComponent("resume_after_fix.lua"), encoding: .utf8)
    let script = try folder.write("resume_after_fix.lua", example)
    let first = try await LunarProcess.run(["run", "--store", store, script])
    #expect(first.status == 1)
    #expect(first.stdout.contains("[prices] step convert failed"), "\(first.stdout)")
    let fixed = example.replacingOccurrences(of: "prices.rates.EUR -- BUG", with: "prices.rates.eur -- fixed")
    #expect(fixed != example)
    _ = try folder.write("resume_after_fix.lua", fixed)
    let second = try await LunarProcess.run(["run", "--store", store, "--resume", script])
    #expect(second.status == 0, "\(second.stderr)")
    let lines = second.stdout.split(separator: "\n").map(String.init)
    // Why each step reruns is said before any step starts.
    #expect(Array(lines.prefix(2)) == ["[prices] resume: convert: code changed", "[prices] resume: report: needs convert"])
    #expect(!second.stdout.contains("fetching"), "the unchanged step was reused")
    #expect(lines.contains("[prices] step count reused in 0.00s"))
    #expect(second.stdout.contains("3 prices in EUR: 5.0, 12.5, 20.0"))
    let forced = try await LunarProcess.run(["run", "--store", store, "--resume", "--force", "count", script])
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(forced.stdout.hasPrefix("[prices] resume: count: forced (--force)\n[prices] resume: report: needs count\n"))
    let refused = try await LunarProcess.run(["run", "--store", store, "--force", "count", script])
    #expect(refused.status == 2)
    #expect(refused.stderr.contains("--force STEP needs --resume"))
  }
}

extension ExampleTests {
  @Test func theNightlyScheduleQueuesRunsAWorkerRuns() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("nightly.db").path
    let outcome = try await LunarProcess.shell("nightly_schedule.sh", [store], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
    // Both runs (the trigger's and the keyed submit's) ran, in a worker's processes.
    // (runs wait's lines, among the runs' own output)
    #expect(outcome.stdout.split(separator: "\n").filter { $0 == "succeeded" }.count == 2, "\(outcome.stdout)")
    #expect(outcome.stdout.contains("report for 2026-12-02: 30 orders\n"), "\(outcome.stdout)")
    #expect(outcome.stderr.contains("lunar worker: run 1: started \(Self.examples.path)/nightly_report.lua\n"), "\(outcome.stderr)")
    #expect(outcome.stderr.contains("lunar worker: run 2: started "), "\(outcome.stderr)")
    #expect(outcome.stdout.hasSuffix("schedule 'nightly' removed (its runs stay in the store)\n"), "\(outcome.stdout)")
  }
}

extension ExampleTests {
  @Test func fanOutRerunsOnlyTheRegionThatWasDown() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("fan.db").path
    let first = try await LunarProcess.run(["run", "--store", store, "fan_out.lua"], in: Self.examples, environment: ["DOWN": "us"])
    #expect(first.status == 1)
    #expect(first.stdout.contains("[fan-out] step deploy[2] failed: us is down"), "\(first.stdout)")
    #expect(first.stdout.contains("[fan-out] step deploy[3] succeeded"), "\(first.stdout)")
    let second = try await LunarProcess.run(["run", "--store", store, "--resume", "fan_out.lua"], in: Self.examples)
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stdout.contains("deploying us (attempt 3)"), "\(second.stdout)")
    #expect(!second.stdout.contains("deploying eu"), "\(second.stdout)")
    #expect(second.stdout.contains("deployed: eu-ok, us-ok, ap-ok"), "\(second.stdout)")
  }
}

extension ExampleTests {
  @Test func everyCoreCountsTheSamePrimesInWorkerProcesses() async throws {
    let here = try await LunarProcess.run(["run", "--no-store", "every_core.lua", "2000"], in: Self.examples)
    let spread = try await LunarProcess.run(
      ["run", "--no-store", "--processes", "2", "every_core.lua", "2000"], in: Self.examples, timeout: 60)
    #expect(here.status == 0 && spread.status == 0, "\(here.stderr) \(spread.stderr)")
    // Primes below 2001, 2002, 2003, 2004: 2003 is the first one more.
    #expect(here.stdout.contains("primes: 303, 303, 303, 304"), "\(here.stdout)")
    #expect(spread.stdout.contains("primes: 303, 303, 303, 304"), "\(spread.stdout)")
  }
}

extension ExampleTests {
  @Test func theServeExampleShowsTheRunsItRecorded() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("serve.db").path
    let outcome = try await LunarProcess.shell("serve_runs.sh", [store, "--check"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
    // scripts/bootstrap installs Graphviz: the run's page draws its graph.
    #expect(outcome.stdout == "Runs · Lunar\n2 runs\ngraph drawn\n", "\(outcome.stdout)")
  }
}
