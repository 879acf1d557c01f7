import Foundation
import Testing
import TestSupport

/// `ctx.log:info/warn/error` as a user sees it on standard error.
@Suite struct ServiceLogCommandTests {
  /// The arguments are written as `print` writes them: their bytes (a NUL
  /// and invalid UTF-8 kept), `tostring` of the rest (a `__tostring` that
  /// fails shows the type), spaces between; and a huge or deep argument is
  /// written without being copied into Swift first.
  @Test func aLogLineIsTheArgumentsBytesAsPrintWritesThem() async throws {
    let script = #"""
      local function deep(n) local t = {} for _ = 1, n do t = { t } end return t end
      lunar.action("logs", { uses = { "log" } }, function(ctx)
        ctx.log:info("a\0b\255", 1, nil, setmetatable({}, { __tostring = function() return "T" end }))
        ctx.log:warn(setmetatable({}, { __tostring = function() error("no") end }))
        ctx.log:error(#string.rep("x", 1 << 20), deep(100000) ~= nil)
      end)
      lunar.run("logs")
      """#
    let running = try LunarProcess.start(["run", "-"], input: script)
    let outcome = try await running.wait()
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let written = [UInt8](try Data(contentsOf: running.stderr.url))
    let expected = Array("info: a".utf8) + [0, UInt8(ascii: "b"), 255] + Array(" 1 nil T\nwarn: (table value)\nerror: 1048576 true\n".utf8)
    #expect(written == expected, "\(String(decoding: written, as: UTF8.self).debugDescription)")
  }
}
