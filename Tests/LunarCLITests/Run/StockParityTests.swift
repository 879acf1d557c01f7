import Foundation
import Testing
import TestSupport

/// Files in `Fixtures/stock` that must behave under `lunar run` exactly as
/// under Debian's `lua5.4`: the same standard output, standard error and
/// exit status. Each guards a stock behaviour Lunar's own machinery (its
/// yieldable `table.sort` and `require`, its state set-up) once changed.
@Suite struct StockParityTests {
  static let folder = Repository.url("Tests/LunarCLITests/Fixtures/stock")

  @Test(arguments: [
    (["yield_barriers.lua"], "attempt to yield across a C-call boundary"),
    (["warnings.lua"], "Lua warning: xy1\n"),
    (["-W", "warnings_flag.lua"], "Lua warning: on from the start\n"),
  ])
  func behavesAsStockLua(arguments: [String], witness: String) async throws {
    let stock = try await Self.runStockLua(arguments)
    let lunar = try await LunarProcess.run(["run"] + arguments, in: Self.folder, timeout: 20)
    #expect(stock.stdout + stock.stderr != "", "lua5.4 printed nothing for \(arguments)")
    #expect((stock.stdout + stock.stderr).contains(witness), "the fixture no longer shows what it guards")
    #expect(lunar.stdout == stock.stdout)
    #expect(lunar.stderr == stock.stderr)
    #expect(lunar.status == stock.status)
  }

  /// Runs Debian's `lua5.4` in the fixtures' folder, output kept apart.
  static func runStockLua(_ arguments: [String]) async throws -> LunarProcess.Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/lua5.4")
    process.arguments = arguments
    process.currentDirectoryURL = folder
    var environment = ProcessInfo.processInfo.environment
    environment["LUA_INIT"] = nil
    environment["LUA_INIT_5_4"] = nil
    process.environment = environment
    let stdout = try TemporaryFile()
    let stderr = try TemporaryFile()
    process.standardOutput = stdout.handle
    process.standardError = stderr.handle
    try process.run()
    await ChildProcess.wait(for: process)
    return LunarProcess.Outcome(status: process.terminationStatus, stdout: try stdout.contents(), stderr: try stderr.contents())
  }
}
