import Foundation
import Testing
import TestSupport

/// The console driven through a pipe, as a script would.
@Suite struct ReplPipeTests {
  func repl(_ input: String, _ arguments: [String] = [], in folder: URL? = nil) async throws -> LunarProcess.Outcome {
    try await LunarProcess.run(["repl"] + arguments, input: input, in: folder)
  }

  @Test func expressionsPrintAllTheirValues() async throws {
    let outcome = try await repl("1 + 2\n1, 'two', nil\n=6 * 7\nprint('side effect')\n")
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "3\n1\ttwo\tnil\n42\nside effect\n", "no prompts through a pipe")
  }

  @Test func incompleteStatementsContinue() async throws {
    let outcome = try await repl("function twice(x)\n  return x * 2\nend\ntwice(21)\nt = {\n  'a',\n}\n#t\ns = [[multi\nline]]\ns\n")
    #expect(outcome.stdout == "42\n1\nmulti\nline\n")
  }

  @Test func errorsAreReportedAndTheSessionGoesOn() async throws {
    let outcome = try await repl("x = = 1\nerror('bad')\nprint('still here')\n")
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "still here\n")
    #expect(outcome.stderr.hasPrefix("stdin:1: unexpected symbol near '='\nstdin:1: bad\nstack traceback:\n"))
    #expect(!outcome.stderr.contains("lunar.repl"), "the console's own frames are hidden")
  }

  @Test func localsStayVisible() async throws {
    let outcome = try await repl("local a = 40\nlocal b <const> = 2\na + b\nlocal function f() return a end\nf()\na = 1\nf()\n")
    #expect(outcome.stdout == "42\n40\n1\n")
  }

  @Test func waitingCallsWorkAtThePrompt() async throws {
    let outcome = try await repl("t = lunar.spawn(function() lunar.sleep(0.01); return 'done' end)\nt:await()\nlunar.sleep(0.001)\n'after'\n")
    #expect(outcome.stdout == "done\nafter\n")
  }

  @Test func backgroundTasksRunBetweenEntries() async throws {
    let outcome = try await repl("done = false\nt = lunar.spawn(function() lunar.sleep(0.01); done = true end)\nlunar.sleep(0.05)\ndone\n")
    #expect(outcome.stdout == "true\n")
  }

  @Test func tasksWokenByTheClockRunBeforeTheNextEntry() async throws {
    let input = """
      ticks, flag, start = 0, false, lunar.now()
      ticker = lunar.spawn(function() for i = 1, 1000 do lunar.sleep(1); ticks = ticks + 1 end end)
      setter = lunar.spawn(function() lunar.sleep(10); flag = true end)
      .clock advance 1000
      ticks, flag
      t = lunar.spawn(function() lunar.sleep(60); return 'slept' end)
      t:await()
      lunar.now() - start

      """
    let outcome = try await repl(input, ["--clock", "virtual"])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(Self.dated(outcome.stdout) == "virtual clock: DATE, 1000.000 s since start\n1000\ttrue\nslept\n1060.0\n",
      "every timer due by then fired in turn; a wait at the prompt moves virtual time")
  }

  @Test func aBackgroundFailureIsReportedAfterTheEntry() async throws {
    let input = """
      failing = lunar.spawn(function() error('boom in the background') end)
      _ = io.stderr:write('next entry\\n')
      t = lunar.spawn(function() lunar.sleep(5); error('later', 0) end)
      .clock advance 5
      print(t:result())

      """
    let outcome = try await repl(input, ["--clock", "virtual"])
    #expect(outcome.status == 0, "errors reported at the prompt do not change the status, as in lua.c")
    #expect(Self.dated(outcome.stdout) == "virtual clock: DATE, 5.000 s since start\nfalse\tlater\n", "the task's result is still there")
    #expect(outcome.stderr.hasPrefix("""
      lunar: unobserved error in task 1 (spawned at stdin:1): stdin:1: boom in the background
      stack traceback:
      """))
    let report = try #require(outcome.stderr.range(of: "lunar: unobserved error in task 2 (spawned at stdin:1): later\n"))
    #expect(outcome.stderr.range(of: "next entry\n")!.upperBound <= report.lowerBound)
    #expect(outcome.stderr.components(separatedBy: "unobserved error").count == 3, "each failure once")
  }

  @Test func dotCommands() async throws {
    let folder = try TemporaryFolder()
    try folder.write("setup.lua", "loaded_value = 99")
    let input = """
      .help
      q = require('lunar.queue').new('work')
      job = q:submit(function() lunar.sleep(100) end)
      .queues
      .tasks
      m = require('lunar.machine').new { name = 'door', initial = 'closed', states = { closed = {} } }
      .machines
      .load setup.lua
      loaded_value
      .trace on
      lunar.spawn(function() end):await()
      .trace off
      .clock advance 5
      .frobnicate
      job:cancel()

      """
    let outcome = try await repl(input, ["--clock", "virtual"], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let out = outcome.stdout
    #expect(out.contains(".tasks                running and waiting tasks"))
    #expect(out.contains("work         1 job, running work#1\n"))
    #expect(out.contains("work#1     running  waits for sleep 100s at "))
    #expect(out.contains("door         closed       mailbox 0\n"))
    #expect(out.contains("99\n"))
    #expect(out.contains("trace on\n"))
    #expect(out.contains("task.spawned id="))
    #expect(out.contains("trace off\n"))
    #expect(Self.dated(out).contains("virtual clock: DATE, 5.000 s since start\n"))
    #expect(out.hasSuffix("true\n"), "the job was still waiting, so it could be cancelled")
    #expect(out.contains("unknown command .frobnicate (try .help)\n"))
  }

  @Test func interactiveFileRunsFirst() async throws {
    let folder = try TemporaryFolder()
    let file = try folder.write("init.lua", "greeting = 'hello from -i'")
    let outcome = try await repl("greeting\n", ["-i", file])
    #expect(outcome.stdout == "hello from -i\n")
  }

  @Test func luaInitRunsAtStart() async throws {
    let outcome = try await LunarProcess.run(["repl"], input: "from_init\n", environment: ["LUA_INIT": "from_init = 'set'"])
    #expect(outcome.stdout == "set\n")
  }

  @Test func osExitLeaves() async throws {
    let outcome = try await repl("print('before')\nos.exit(4)\nprint('after')\n")
    #expect(outcome.status == 4)
    #expect(outcome.stdout == "before\n")
  }

  @Test func theVirtualClockStartsAtTheRealTime() async throws {
    let before = Date().timeIntervalSince1970
    let outcome = try await repl("os.time()\n.clock\n", ["--clock", "virtual"])
    let after = Date().timeIntervalSince1970
    let lines = outcome.stdout.split(separator: "\n")
    let time = try #require(lines.first.flatMap { Double($0) })
    #expect(time >= before.rounded(.down) && time <= after.rounded(.up), "os.time() under the virtual clock: \(time)")
    let year = Calendar(identifier: .gregorian).component(.year, from: Date(timeIntervalSince1970: time))
    #expect(lines.dropFirst().first?.hasPrefix("virtual clock: \(year)-") == true, "\(outcome.stdout)")
  }

  @Test func aTableShowsItsContentsNestedSortedAndBounded() async throws {
    let input = """
      t = { 3, 1, z = { "a\\255", true }, a = 2.5, [10] = false }
      t.self = t
      = t
      t, 'plain'
      big = {} for i = 1, 100 do big[i] = i end
      big
      {{{{{{{{{{1}}}}}}}}}}
      {}

      """
    let outcome = try await repl(input)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let address = try #require(outcome.stdout.firstMatch(of: /self = <cycle: table: (0x[0-9a-f]+)>/)?.1)
    let shown = "{ 3, 1, [10] = false, a = 2.5, self = <cycle: table: \(address)>, z = { \"a\\255\", true } }"
    #expect(outcome.stdout.hasPrefix(shown + "\n" + shown + "\tplain\n"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("\n  1, 2, 3, 4, 5, "), "elements share lines")
    #expect(outcome.stdout.contains(" 64, ... (36 more),\n}\n"), "64 entries of a table at most")
    #expect(outcome.stdout.hasSuffix("{ { { { { { { { {...} } } } } } } } }\n{}\n"), "8 tables deep at most")
  }

  @Test func completionAfterAColonOffersTheMethods() async throws {
    let input = """
      q = require('lunar.queue').new('w')
      s = 'text'
      obj = setmetatable({ own = function() end, field = 1 }, { __index = { inherited = function() end } })
      table.concat(require('lunar.repl').complete('q:'), ' ')
      table.concat(require('lunar.repl').complete('s:up'), ' ')
      table.concat(require('lunar.repl').complete('obj:'), ' ')
      #require('lunar.repl').complete('nothing:')

      """
    let outcome = try await repl(input)
    #expect(outcome.stdout == "q:drain q:length q:running q:submit\ns:upper\nobj:inherited obj:own\n0\n", "\(outcome.stderr)")
  }

  @Test func leavingWithTasksOrMachinesAtWorkSaysSo() async throws {
    let busy = try await repl("""
      t = lunar.spawn(function() lunar.sleep(100) end)
      m = require('lunar.machine').new { name = 'door', initial = 'a',
        states = { a = { enter = function() return { { 'after', 5, { 'x' } } } end } } }

      """)
    #expect(busy.status == 0)
    #expect(busy.stderr == "lunar: leaving stops 1 task and 1 machine still running: task 1 (waits for sleep 100s), machine door\n")
    let idle = try await repl("lunar.spawn(function() end):await()\n")
    #expect(idle.stderr == "")
  }

  /// `text` with each date `.clock` prints replaced by `DATE`.
  static func dated(_ text: String) -> String {
    text.replacing(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/, with: "DATE")
  }
}

/// The console through a terminal (tmux), as a person uses it.
@Suite(.serialized) struct ReplTerminalTests {
  static let tmux = "/usr/bin/tmux"

  /// Runs a shell script driving tmux (a detached session on its own
  /// socket); returns what it printed. Killed after 30 s.
  func drive(_ script: String) async throws -> String {
    let folder = try TemporaryFolder()
    let path = try folder.write("drive.sh", script)
    let output = try TemporaryFile()
    // posix_spawn, not Foundation's Process.run (see SpawnedProcess).
    let null = open("/dev/null", O_RDWR)
    defer { close(null) }
    let process = try SpawnedProcess(
      executable: "/bin/sh", arguments: [Array(path.utf8)], environment: ProcessInfo.processInfo.environment,
      stdin: null, stdout: output.handle.fileDescriptor,
      stderr: null)
    await ChildProcess.wait(for: process)
    return try output.contents()
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: tmux)))
  func editingHistoryCompletionAndCtrlC() async throws {
    let home = try TemporaryFolder()
    let socket = "lunar-\(UUID().uuidString.prefix(8))"
    let screen = try await drive("""
      export TERM=xterm
      T="\(Self.tmux) -f /dev/null -L \(socket)"
      # Waits until the console shows an empty prompt (the machine may be
      # busy running other tests, so no fixed pause is long enough).
      ready() {
        for i in $(seq 150); do
          [ "$($T capture-pane -t s -p | grep -v '^$' | tail -n 1 | sed 's/ *$//')" = ">" ] && return 0
          sleep 0.1
        done
      }
      $T new-session -d -s s -x 100 -y 30 "env HOME=\(home.url.path) TERM=xterm \(LunarProcess.binary) repl; sleep 30"
      ready
      $T send-keys -t s 'x = 40' Enter; ready
      $T send-keys -t s 'lunar.qu' Tab
      for i in $(seq 100); do $T capture-pane -t s -p | grep -q 'lunar.queue' && break; sleep 0.1; done
      $T send-keys -t s '== nil' Enter; ready
      $T send-keys -t s 'while true do end' Enter; sleep 0.5
      $T send-keys -t s C-c; ready
      $T send-keys -t s 'x + 2' Enter; ready
      $T send-keys -t s "print('partial')"; sleep 0.3
      $T send-keys -t s C-c; ready
      $T send-keys -t s Up Up Up C-a C-k "'edited'" Enter
      # The prompt before the entry also passes for ready: wait for its output.
      for i in $(seq 150); do $T capture-pane -t s -p | grep -qx 'edited' && break; sleep 0.1; done
      $T capture-pane -t s -p
      $T send-keys -t s C-d; sleep 0.5
      $T kill-server 2>/dev/null || true
      """)
    #expect(screen.contains("> lunar.queue == nil\nfalse"), "completion: \(screen)")
    #expect(screen.contains("^Cinterrupted\n> x + 2\n42"), "Ctrl-C on a busy loop: \(screen)")
    #expect(screen.contains("> 'edited'\nedited"), "history and editing: \(screen)")
    #expect(!screen.contains("\npartial\n"), "Ctrl-C at the prompt dropped the line: \(screen)")
    let history = try String(contentsOf: home.url.appendingPathComponent(".lunar_history"), encoding: .utf8)
    #expect(history.contains("x\\040+\\0402"), "history kept in ~/.lunar_history: \(history)")
  }
}
