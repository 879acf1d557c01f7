import Foundation
import TestSupport
import LuaKit
import Testing

@testable import Lunar

/// A Swift action: adds two numbers, failing on request.
struct Add: RunnableAction {
  struct Output: Codable, Sendable { var sum: Int; var note: String? }
  static let name = "math.add"
  var a: Int
  var b: Int
  var fail: Bool?

  func execute(in context: RunContext) async throws -> Output {
    if fail == true { throw ActionError.failed(action: Self.name, reason: "asked to fail") }
    context.event("added", [.init("sum", .integer(Int64(a + b)))])
    return Output(sum: a + b, note: context.chain.map(\.description).joined(separator: ">"))
  }
}

/// A Swift action that reaches for a service it did not declare.
struct Sneaky: RunnableAction {
  static let name = "sneaky"
  func execute(in context: RunContext) async throws -> String {
    _ = try context.http
    return "unreachable"
  }
}

/// Says which attempt of its job it is, and passes the attempt to an action it runs.
struct Attempt: RunnableAction {
  static let name = "attempt"
  var nested: Bool?
  func execute(in context: RunContext) async throws -> [Int] {
    guard nested == true else { return [context.attempt] }
    let inner = try await context.run("attempt", .table([:]))
    return [context.attempt] + (inner.tableValue?.array.compactMap { $0.integerValue.map(Int.init) } ?? [])
  }
}

/// A Swift action named `é`, composed (U+00E9).
struct Composed: RunnableAction {
  static let name = "\u{E9}"
  func execute(in context: RunContext) async throws -> String { "composed" }
}

struct ActionsPlugin: LunarPlugin {
  let name = "test.actions"
  func install(in runtime: RuntimeCore) throws {
    runtime.actions.register(Add.self)
    runtime.actions.register(Sneaky.self)
    runtime.actions.register(Composed.self)
  }
}

@Suite struct ActionTests {
  func runtime(_ configure: (inout RuntimeConfiguration) -> Void = { _ in }) throws -> TestRuntime {
    try TestRuntime(clock: .virtual(start: 1000)) {
      $0.plugins = [ActionsPlugin()]
      configure(&$0)
    }
  }

  @Test func chainingPassesTheContextDown() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      lunar.action("inner", { uses = { "store" } }, function(ctx, input)
        ctx.store:set("seen", input.value)
        return table.concat(ctx.chain, " → ")
      end)
      lunar.action("outer", { uses = { "store" } }, function(ctx, input)
        local chain = ctx:run("inner", { value = input * 2 })
        return chain, ctx.store:get("seen")
      end)
      local chain = lunar.run("outer", 21)
      local sum = lunar.run("math.add", { a = 1, b = 2 })
      return chain, sum.sum, sum.note
      """)
    #expect(results == ["outer → inner", 3, "math.add"])
  }

  @Test func aSwiftActionSeesItsJobsAttemptAndPassesItDown() async throws {
    let runner = ActionRunner(services: Services(), now: { 0 })
    runner.register(Attempt.self)
    let retried = try await runner.run(LuaString("attempt"), input: .table(["nested": true]), attempt: 2)
    #expect(retried == .table(LuaTable(array: [.integer(2), .integer(2)])))
    let first = try await runner.run(LuaString("attempt"), input: .table([:]))
    #expect(first == .table(LuaTable(array: [.integer(1)])))
  }

  @Test func undeclaredServicesAreClearErrors() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      lunar.action("greedy", { uses = { "http" } }, function(ctx) return ctx.store end)
      local ok, err = pcall(lunar.run, "greedy")
      local ok2, err2 = pcall(lunar.run, "sneaky")
      return err, err2
      """)
    #expect(results[0].stringValue?.hasSuffix("action 'greedy' did not declare service 'store' (it uses: http)") == true)
    #expect(results[1].stringValue?.hasSuffix("action 'sneaky' did not declare service 'http' (it uses: nothing)") == true)
  }

  /// `run_declared` (a workflow's `run` step) runs a function as the action
  /// it names without registering it: the declared services and none other,
  /// the step's fields in the context, a chain a level deeper.
  @Test func anUnregisteredActionHasItsDeclaredServicesAndTheStepsFields() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local actions = require "lunar.actions"
      local steps = {}
      local output = actions.run_declared("workflow w/s", function(ctx, input)
        ctx.store:set("seen", input)
        return { ctx.action, ctx.workflow, ctx.step, ctx.steps == steps, ctx.attempt, table.concat(ctx.chain, ">"),
          ctx.store:get("seen"), lunar.run("math.add", { a = 1, b = 2 }).note }
      end, actions.declare({ "store" }), 7, 2, "w", "s", steps)
      local undeclared = actions.run_declared("workflow w/t", function(ctx)
        local ok, err = pcall(function() return ctx.store end)
        return { ok, err, ctx.no_such_service == nil, ctx.attempt }
      end, actions.declare(nil), nil, nil, "w", "t", steps)
      return output, undeclared, actions.declare(nil) == actions.declare({})
      """)
    #expect(results[0] == .table(LuaTable(array: ["workflow w/s", "w", "s", true, 2, "workflow w/s", 7, "workflow w/s>math.add"])))
    let undeclared = results[1].tableValue?.array ?? []
    #expect(undeclared.first == false)
    #expect(undeclared.count == 4 && undeclared[1].stringValue?.hasSuffix("action 'workflow w/t' did not declare service 'store' (it uses: nothing)") == true, "\(undeclared)")
    #expect(undeclared.count == 4 && undeclared[2] == true && undeclared[3] == 1, "\(undeclared)")
    #expect(results[2] == true, "every declaration of no services shares one metatable")
  }

  @Test func aStepsActionIsNotInTheList() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local actions = require "lunar.actions"
      local workflow = require "lunar.workflow"
      local before = #actions.list()
      workflow.execute(workflow "w" { workflow.step "s" { run = function() return 1 end } })
      return #actions.list() - before
      """)
    #expect(results == [0])
  }

  @Test func aStepsActionRunsBelowTheCodeThatRunsTheWorkflowInEveryAttempt() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local workflow = require "lunar.workflow"
      local chains = {}
      local function note(ctx) chains[#chains + 1] = table.concat(ctx.chain, ">") end
      lunar.action("deploy", function()
        workflow.execute(workflow "w" {
          workflow.step "s" {
            retry = { attempts = 2, backoff = 0 },
            run = function(ctx)
              note(ctx)
              if ctx.attempt == 1 then error("once") end
            end,
          },
        })
      end)
      lunar.run("deploy")
      workflow.execute(workflow "top" { workflow.step "t" { run = note } })
      return table.concat(chains, " | ")
      """)
    // The retry starts from a timer, outside the task that runs the workflow.
    #expect(results == ["deploy>workflow w/s | deploy>workflow w/s | workflow top/t"])
  }

  @Test func theRecursionLimitNamesTheChain() async throws {
    let lua = try runtime { $0.plugins = [ActionModulePlugin(options: ActionOptions(recursionLimit: 4))] }
    let results = try await lua.run("""
      lunar.action("login", function(ctx) return ctx:run("store_token") end)
      lunar.action("store_token", function(ctx) return ctx:run("login") end)
      lunar.action("self", function(ctx) return ctx:run("self") end)
      local _, indirect = pcall(lunar.run, "login")
      local _, direct = pcall(lunar.run, "self")
      return indirect, direct
      """)
    #expect(results[0].stringValue?.hasSuffix("action chain deeper than 4: login → store_token → login → store_token → login") == true)
    #expect(results[1].stringValue?.hasSuffix("action chain deeper than 4: self → self → self → self → self") == true)
  }

  @Test func lunarRunInsideAnActionIsOneLevelDeeper() async throws {
    let lua = try runtime { $0.plugins = [ActionModulePlugin(options: ActionOptions(recursionLimit: 4))] }
    let results = try await lua.run("""
      lunar.action("again", function(_, n) return lunar.run("again", n + 1) end)
      lunar.action("spawned", function(_, n)
        return lunar.spawn(function() return lunar.run("spawned", n + 1) end):await()
      end)
      local _, nested = pcall(lunar.run, "again", 1)
      local _, other_task = pcall(lunar.run, "spawned", 1)
      return nested, other_task
      """)
    #expect(results[0].stringValue?.hasSuffix("action chain deeper than 4: again → again → again → again → again") == true,
      "\(results[0])")
    #expect(results[1].stringValue?.hasSuffix("action chain deeper than 4: spawned → spawned → spawned → spawned → spawned") == true,
      "a task the action spawned carries its chain: \(results[1])")
  }

  @Test func aLuaActionsInputAndOutputAreCopiesAsASwiftActionsAre() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local kept
      lunar.action("keep", function(_, input) kept = input; input.seen = true; return input end)
      local input = { n = 1, list = { 1, 2 } }
      local output = lunar.run("keep", input)
      input.n, output.n = 2, 3
      lunar.action("leak", function() return { f = print } end)
      local ok_in, refused_in = pcall(lunar.run, "keep", { items = { 1, 2, function() end } })
      local ok_out, refused_out = pcall(lunar.run, "leak")
      return kept.n, input.seen == nil, output.seen, kept == output, ok_in, refused_in, ok_out, refused_out
      """)
    #expect(results[0] == 1, "the caller's later change does not reach the action's copy")
    #expect(results[1] == true, "the action's change does not reach the caller's table")
    #expect(results[2] == true)
    #expect(results[3] == false, "the output is a copy too")
    #expect(results[4] == false)
    #expect(results[5].stringValue?.hasSuffix("input.items[3]: a function cannot cross into Swift") == true, "\(results[5])")
    #expect(results[6] == false)
    #expect(results[7].stringValue?.hasSuffix("action 'leak' returned output.f: a function cannot cross into Swift") == true,
      "\(results[7])")
  }

  @Test func swiftErrorsReachLuaWithTheActionName() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local ok, err = pcall(lunar.run, "math.add", { a = 1, b = 2, fail = true })
      local ok2, err2 = pcall(lunar.run, "math.add", { a = 1 })
      local ok3, err3 = pcall(lunar.run, "math.add", { a = "one", b = 2 })
      return err, err2, err3
      """)
    #expect(results[0].stringValue?.hasSuffix("action 'math.add' failed: asked to fail") == true)
    #expect(results[1].stringValue?.hasSuffix("action 'math.add': bad input: input.b: missing field") == true)
    #expect(results[2].stringValue?.hasSuffix("action 'math.add': bad input: input.a: integer expected, got string") == true)
  }

  @Test func luaErrorsReachSwiftWithFileAndLine() async throws {
    let lua = try runtime()
    let failure = await lua.failure("""
      lunar.action("broken", function() error("lua side broke") end)
      lunar.run("broken")
      """)
    guard case .lua(let error) = failure else {
      Issue.record("expected a Lua error, got \(String(describing: failure))")
      return
    }
    #expect(error.chunk == "test.lua")
    #expect(error.line == 1)
    #expect(error.text == "lua side broke")
  }

  @Test func spansAreNestedWithDurationsFromTheClock() async throws {
    let lua = try runtime()
    _ = try await lua.run("""
      lunar.action("slow", function(ctx) lunar.sleep(2); ctx:event("halfway", { step = 1 }); lunar.sleep(3) end)
      lunar.action("outer", function(ctx) lunar.sleep(1); ctx:run("slow"); return "ok" end)
      lunar.run("outer")
      """)
    #expect(lua.events("action.") == [
      "action.started action=outer depth=0 input=nil",
      "action.started action=slow depth=1 input=nil",
      "action.event action=slow event=halfway step=1",
      "action.finished action=slow duration=5.0",
      "action.finished action=outer duration=6.0",
    ])
  }

  @Test func aStubbedServiceAndTheListOfRuns() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      lunar.action("store_token", { uses = { "store" } }, function(ctx, input) ctx.store:set("token", input.token) end)
      lunar.action("login", { uses = { "http" } }, function(ctx, input)
        local reply = ctx.http:post_json(input.url, { email = input.email })
        ctx:run("store_token", { token = reply.token })
        return { user = reply.user }
      end)
      local fake = { post_json = function(self, url, body) return { token = "T", user = body.email } end }
      local out, runs = lunar.run_stubbed({ http = fake }, "login", { url = "http://nowhere.invalid", email = "a@b.c" })
      return out.user, #runs, runs[1].name, runs[2].name, runs[2].input.token
      """)
    #expect(results == ["a@b.c", 2, "login", "store_token", "T"])
  }

  @Test func recordThenReplayAgainstARealServer() async throws {
    let server = try TestHTTPServer { request in
      TestHTTPServer.Reply(body: #"{"token":"tok-123","user":"ada","echo":\#(request.body)}"#)
    }
    defer { server.stop() }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-journal-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let journal = folder.appendingPathComponent("run.jsonl").path
    let script = """
      lunar.action("store_token", { uses = { "store", "clock" } }, function(ctx, input)
        ctx.store:set("token", input.token)
        return ctx.clock:now()
      end)
      lunar.action("login", { uses = { "http" } }, function(ctx, input)
        local reply = ctx.http:post_json(input.url .. "/login", { email = input.email })
        local at = ctx:run("store_token", { token = reply.token })
        return { user = reply.user, echoed = reply.echo.email, at = at }
      end)
      local out = lunar.run("login", { url = "\(server.url)", email = EMAIL or "a@b.c" })
      return out.user, out.echoed, out.at
      """
    let recording = try runtime { $0.plugins = [ActionModulePlugin(options: ActionOptions(recording: .record(path: journal)))]; $0.clock = .virtual(start: 5000) }
    let recorded = try await recording.run(script)
    #expect(recorded == ["ada", "a@b.c", .number(5000)])
    #expect(server.requests.count == 1)

    let replaying = try runtime { $0.plugins = [ActionModulePlugin(options: ActionOptions(recording: .replay(path: journal)))]; $0.clock = .virtual(start: 9999) }
    let replayed = try await replaying.run(script)
    #expect(replayed == recorded, "the same output, the clock included")
    #expect(server.requests.count == 1, "the replay made no request")

    let diverging = try runtime { $0.plugins = [ActionModulePlugin(options: ActionOptions(recording: .replay(path: journal)))] }
    let failure = await diverging.failure("EMAIL = 'someone@else'\n" + script)
    let message = try #require(failure?.luaMessage)
    #expect(message.contains("replay diverged at call 1: the journal has action"))
    #expect(message.contains("someone@else"))
    #expect(server.requests.count == 1)
  }

  @Test func httpErrorsAreLuaErrors() async throws {
    let server = try TestHTTPServer { request in
      request.path == "/bad" ? TestHTTPServer.Reply(status: 503, body: #"{"error":"down"}"#) : TestHTTPServer.Reply(body: "not json")
    }
    defer { server.stop() }
    let lua = try runtime()
    let results = try await lua.run("""
      lunar.action("get", { uses = { "http" } }, function(ctx, url) return ctx.http:get_json(url) end)
      local _, status = pcall(lunar.run, "get", "\(server.url)/bad")
      local _, invalid = pcall(lunar.run, "get", "\(server.url)/garbage")
      local _, offline = pcall(lunar.run, "get", "http://127.0.0.1:1/nothing")
      return status, invalid, offline
      """)
    #expect(results[0].stringValue?.hasSuffix("\(server.url)/bad answered HTTP 503") == true)
    #expect(results[1].stringValue?.contains("sent invalid JSON") == true)
    #expect(results[2].stringValue?.contains("cannot reach http://127.0.0.1:1/nothing") == true)
  }

  @Test func httpTimeoutsAreCheckedBeforeAnyRequest() async throws {
    let server = try TestHTTPServer { _ in TestHTTPServer.Reply(body: "{}") }
    defer { server.stop() }
    let lua = try runtime()
    let results = try await lua.run("""
      lunar.action("get", { uses = { "http" } }, function(ctx, input)
        return ctx.http:get_json("\(server.url)/x", { timeout = input.timeout })
      end)
      lunar.action("post", { uses = { "http" } }, function(ctx, input)
        return ctx.http:post_json("\(server.url)/x", {}, input)
      end)
      local messages = {}
      for _, timeout in ipairs { -1, 0/0, 1/0, "5" } do
        messages[#messages + 1] = select(2, pcall(lunar.run, "get", { timeout = timeout }))
      end
      messages[#messages + 1] = select(2, pcall(lunar.run, "post", "soon"))
      return table.unpack(messages)
      """)
    #expect(results == [
      "test.lua:2: bad argument #2 to 'get_json' (field 'timeout' must be a non-negative number of seconds, got -1)",
      "test.lua:2: bad argument #2 to 'get_json' (field 'timeout' must be a non-negative number of seconds, got -nan)",
      "test.lua:2: bad argument #2 to 'get_json' (field 'timeout' must be a non-negative number of seconds, got inf)",
      "test.lua:2: bad argument #2 to 'get_json' (field 'timeout' must be a non-negative number of seconds, got string)",
      "test.lua:5: bad argument #3 to 'post_json' (table expected, got string)",
    ])
    #expect(server.requests.isEmpty)
  }
}

/// Action names and store keys from Lua are bytes: `é` composed
/// ("\xC3\xA9") and decomposed ("e\xCC\x81") are two names.
@Suite struct ActionNameTests {
  @Test func aSwiftActionRunsOnlyUnderItsOwnBytes() async throws {
    let lua = try TestRuntime { $0.plugins = [ActionsPlugin()] }
    let results = try await lua.run(#"""
      local ok, err = pcall(lunar.run, 'e\xCC\x81')
      return lunar.run('\xC3\xA9'), ok, err:find("unknown action 'e\xCC\x81'", 1, true) ~= nil
      """#)
    #expect(results == ["composed", false, true])
  }

  @Test func storeKeysAreBytes() async throws {
    let lua = try TestRuntime { $0.plugins = [ActionsPlugin()] }
    let results = try await lua.run(#"""
      lunar.action('keep', { uses = { 'store' } }, function(ctx)
        ctx.store:set('\xC3\xA9', 'composed')
        ctx.store:set('\xfe', 'fe')
        return { ctx.store:get('e\xCC\x81'), ctx.store:get('\xff'), ctx.store:get('\xC3\xA9') }
      end)
      local got = lunar.run('keep')
      return got[1], got[2], got[3]
      """#)
    #expect(results == [.nil, .nil, "composed"])
  }
}

/// The Swift API on its own, without Lua.
@Suite struct ActionRunnerTests {
  @Test func runsSwiftActionsByName() async throws {
    let runner = ActionRunner(services: Services(), now: { 0 })
    runner.register(Add.self)
    let output = try await runner.run("math.add", input: ["a": 2, "b": 40])
    #expect(output["sum"] == 42)
    #expect(output["note"] == "math.add")
    await #expect(throws: ActionError.unknown("nope")) { try await runner.run("nope", input: .nil) }
  }

  @Test func theLimitStopsDeepChains() async throws {
    let runner = ActionRunner(services: Services(), recursionLimit: 2, now: { 0 })
    runner.register(Add.self)
    await #expect(throws: ActionError.recursion(chain: ["x", "y", "math.add"], limit: 2)) {
      try await runner.run("math.add", input: ["a": 1, "b": 1], chain: ["x", "y"])
    }
  }
}
