import CLua
import CLuaShim
import LuaKit

/// The Lua faces of the run's services, as actions see them through
/// `ctx.http`, `ctx.store`, `ctx.log` and `ctx.clock`. Calls that touch the
/// outside world go through the journal: recorded, or answered from it.
enum ServiceObjects {
  static func install(in runtime: RuntimeCore, scheduler: Scheduler) throws {
    let state = runtime.state
    let journal = runtime.actions.journal as Journal?
    let http = runtime.component(ActionSystem.self).http
    let store = runtime.store

    let base = state.top
    defer { state.top = base }
    state.pushLoadedModules()
    state.pushField("lunar.actions", of: -1)
    state.pushField("service", of: -1)
    let register = state.top

    func define(_ name: String, _ methods: [(String, LuaFunction)]) throws {
      state.pushValue(at: register)
      state.push(name)
      state.newTable(fieldCapacity: methods.count)
      for (method, function) in methods {
        state.push(function: function)
        state.setField(method, of: -2)
      }
      try state.call(arguments: 2, results: 0)
    }

    // http:get_json(url [, {timeout=}]), http:post_json(url, body [, opts]),
    // http:get(url [, opts]) -> { status =, body = }
    func request(_ call: LuaCall, method: String, json: Bool) throws -> LuaReturn {
      let url = try call.string(2)
      // The body is kept until the request is done: charged meanwhile.
      let chargedBody = method == "POST" ? try call.chargedValue(3, name: "body") : ChargedValue(.nil)
      let body = chargedBody.value
      let position: Int32 = method == "POST" ? 4 : 3
      let options = try call.value(position, name: "options")
      guard options == .nil || options.tableValue != nil else { throw LuaArgumentError.type(position, expected: "table") }
      let timeout = try OptionField("timeout", argument: position).seconds(options["timeout"]) ?? 30
      var requestKey: LuaTable = ["method": .string(LuaString(method)), "url": .string(LuaString(url))]
      if body != .nil { requestKey["body"] = body }
      let key = requestKey
      // Numbered now, on the loop: the answer is recorded when it comes.
      let journalCall = journal?.nextCall(in: scheduler.currentTask?.journalScope)
      if let journal, let journalCall, journal.isReplaying {
        let entry = try journal.step(kind: "http", key: key, at: journalCall) ?? LuaTable()
        if case .string(let message) = entry["error"] { throw LuaScriptError(message.lossyString) }
        try call.push(entry["response"])
        return .one
      }
      let budget = runtime.memoryBudget.isLimited ? runtime.memoryBudget : nil
      return runtime.suspend(call, awaiting: "\(method) \(url)") {
        defer { withExtendedLifetime(chargedBody) {} }
        let response: LuaValue
        do {
          if json {
            response =
              method == "POST"
              ? try await http.postJSON(url, body, timeout: timeout, budget: budget)
              : try await http.getJSON(url, timeout: timeout, budget: budget)
          } else {
            let raw = try await http.send(HTTPRequest(method: method, url: url, timeout: timeout))
            response = ["status": .integer(Int64(raw.status)), "body": .string(LuaString(bytes: raw.body))]
          }
        } catch {
          // Every ending is recorded (a cancelled request too), so the
          // step's later calls keep their positions on replay.
          let message = (error as? HTTPError)?.description ?? String(describing: error)
          if let journalCall {
            try journal?.step(kind: "http", key: key, result: ["error": .string(LuaString(message))], at: journalCall)
          }
          if error is HTTPError { throw LuaScriptError(message) }
          throw error
        }
        if let journalCall { try journal?.step(kind: "http", key: key, result: ["response": response], at: journalCall) }
        return response
      }
    }
    try define("http", [
      ("get_json", { call in try request(call, method: "GET", json: true) }),
      ("post_json", { call in try request(call, method: "POST", json: true) }),
      ("get", { call in try request(call, method: "GET", json: false) }),
    ])

    try define("store", [
      ("get", { call in
        try call.push(store.get(try call.bytes(2)))
        return .one
      }),
      ("set", { call in
        store.set(try call.bytes(2), try call.chargedValue(3, name: "value"))
        return .none
      }),
    ])

    func log(_ level: String) -> LuaFunction {
      { [unowned runtime] call in
        // The arguments as `print` writes them (`tostring`, spaces between),
        // as bytes: nothing is copied into Swift values first, so a huge or
        // deep table costs its `tostring`, not its size.
        var text: [UInt8] = []
        var i: Int32 = 2
        while i <= call.argumentCount {
          if i > 2 { text.append(UInt8(ascii: " ")) }
          var length = 0
          if let bytes = lunar_tostring(call.L, i, &length) {
            text.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: length))
          }
          lua_settop(call.L, -2)
          i += 1
        }
        runtime.trace.emit("log.\(level)", [.init("text", .string(LuaString(bytes: text)))])
        let line = Array("\(level): ".utf8) + text
        LogLine.write(bytes: line)
        scheduler.currentTask?.stepLog?.appendLine(bytes: line)
        return .none
      }
    }
    try define("log", [("info", log("info")), ("warn", log("warn")), ("error", log("error"))])

    try define("clock", [
      ("now", { [unowned runtime] call in
        var now = runtime.clock.now
        if let journal {
          let scope = scheduler.currentTask?.journalScope
          if journal.isReplaying {
            now = try journal.step(kind: "clock", key: [:], in: scope)?["now"].numberValue ?? now
          } else {
            try journal.step(kind: "clock", key: [:], result: ["now": .number(now)], in: scope)
          }
        }
        call.push(now)
        return .one
      })
    ])
  }
}
