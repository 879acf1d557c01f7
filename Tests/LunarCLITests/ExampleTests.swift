import Foundation
import Testing

/// The examples in `examples/` are part of the product: each must run.
@Suite struct ExampleTests {
  static let examples = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("examples")

  @Test func helloGreetsByName() throws {
    let outcome = try LunarProcess.run(["run", "hello.lua", "Ada"], in: Self.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "hello, Ada, from Lua 5.4\narg[0] = hello.lua, 1 argument(s)\n")
  }
}
