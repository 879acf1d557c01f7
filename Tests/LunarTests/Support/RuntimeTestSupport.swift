import LuaKit
import Testing

@testable import Lunar

/// A runtime on the virtual clock with a trace recorder, for tests.
struct TestRuntime {
  let runtime: Runtime
  let recorder = TraceRecorder()

  init(clock: RuntimeClock.Kind = .virtual(start: 1_000_000), configure: (inout RuntimeConfiguration) -> Void = { _ in }) throws {
    var configuration = RuntimeConfiguration()
    configuration.clock = clock
    configuration.traceSinks = [recorder]
    configure(&configuration)
    runtime = try Runtime(configuration)
  }

  /// Runs `source` as the main chunk `@test.lua`.
  func run(_ source: String) async throws(RunFailure) -> [LuaValue] {
    try await runtime.run(Script(source: .text(source, chunkName: "@test.lua")))
  }

  /// Runs `source` and returns how it failed.
  func failure(_ source: String) async -> RunFailure? {
    do {
      _ = try await run(source)
      return nil
    } catch {
      return error
    }
  }

  /// The recorded events whose kind starts with `prefix`, as summaries.
  func events(_ prefix: String) -> [String] {
    recorder.events.filter { $0.kind.hasPrefix(prefix) }.map(\.summary)
  }
}

extension RunFailure {
  /// The Lua error's message, or nil for other failures.
  var luaMessage: String? {
    if case .lua(let error) = self { return error.message }
    return nil
  }
}
