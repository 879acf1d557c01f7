import CBenchSupport
import CLua
import LuaKit

/// A call from Lua to a Swift host function taking two integers, against
/// the same function written in C and pushed with lua_pushcfunction.
enum HostCallBenchmark {
  static func run() throws {
    let state = try LuaState()
    state.register("swift_add") { call in
      call.push(try call.integer(1) &+ call.integer(2))
      return .one
    }
    lua_pushcclosure(state.L, bench_c_add, 0)
    state.setGlobal("c_add")
    try state.load(
      """
      local f, n = ...
      local x = 0
      for i = 1, n do x = f(x, i) end
      return x
      """, name: "=bench")
    let loop = LuaReference(popping: state)

    func time(_ function: String) throws -> Double {
      try Harness.nanoseconds(iterations: 2_000_000) { n in
        loop.push()
        state.getGlobal(function)
        lua_pushinteger(state.L, lua_Integer(n))
        try state.call(arguments: 2, results: 1)
        state.pop()
      }
    }
    let swift = try time("swift_add")
    let c = try time("c_add")
    Harness.report("Lua → Swift host call add(a, b)", subject: swift, baseline: c, baselineName: "C:", goal: "≤ 1.5×")
  }
}
