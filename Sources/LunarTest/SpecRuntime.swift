import LuaKit
import Lunar
import Synchronization

/// A runtime set up for spec files (own Lua state, own thread, the virtual
/// clock; the plugins, luassert and busted loaded) that runs one file after
/// another. Between two files `restore` puts it back exactly as it was
/// before the first (`RuntimeCore.restorePristine`): a file sees nothing of
/// the one before, as in a new runtime, without paying for one.
final class SpecRuntime: Sendable {
  private let runtime: Runtime
  private let log: SpecResultLog
  private let options: SpecOptions
  private let reusable: Bool
  private let filesRun = Atomic<Int>(0)

  /// How many files have run in the runtime.
  var files: Int { filesRun.load(ordering: .relaxed) }
  private let lastPath = Mutex<String?>(nil)

  /// The file that ran last in the runtime.
  var lastFile: String? { lastPath.withLock { $0 } }

  /// Sets up a runtime for `options`' files; a `reusable` one is recorded
  /// as it is now, for `restore`. `traceSink` gets the trace events (and
  /// the tests' marks) of the file it was made for.
  init(options: SpecOptions, reusable: Bool, traceSink: (any TraceSink)? = nil) async throws {
    let log = SpecResultLog()
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: SpecClock.epochNow())
    if let traceSink { configuration.traceSinks.append(traceSink) }
    configuration.coverage = options.coverage
    configuration.plugins = options.plugins + [SpecPlugin(log: log, details: options.details, traceSink: traceSink)]
    configuration.environment = options.environment
    configuration.pluginDirectories = options.pluginDirectories
    configuration.runsLuaInit = false
    configuration.catchesInterrupts = options.catchesInterrupts
    // A finalizer that loops while the state closes holds its loop thread
    // only, never the file after it or the report; but coverage counts a
    // runtime's lines when it closes, before the report is written.
    configuration.waitsForCloseOnRelease = options.coverage != nil
    runtime = try Runtime(configuration)
    let setUpArguments = SpecRunner.setUpArguments(options)
    try await runtime.perform { core in
      try core.state.load(bytes: SpecRunner.setUpChunk, name: "=lunar test")
      try core.state.push(setUpArguments)
      try core.state.call(arguments: Int32(setUpArguments.count), results: 0)
      if reusable { try core.markPristine() }
    }
    self.log = log
    self.options = options
    self.reusable = reusable
  }

  /// Runs one file. The tests that finished are kept whatever stops the
  /// file; a Ctrl-C after `interruptsBefore` stops it, and an interrupted
  /// file adds nothing more.
  func run(_ path: String, interruptsBefore: Int) async -> SpecFileResult {
    filesRun.add(1, ordering: .relaxed)
    lastPath.withLock { $0 = path }
    let started = SpecClock.now()
    let script = Script(source: .text(SpecRunner.driver, chunkName: "=lunar test"), arguments: [path])
    var failure: SpecResult?
    do throws(RunFailure) {
      // A Ctrl-C that came before this file caught interrupts stops it too.
      if options.catchesInterrupts && Runtime.interruptCount > interruptsBefore {
        throw RunFailure.interrupted("interrupted")
      }
      _ = try await runtime.runRestored(script, clockStart: SpecClock.epochNow())
    } catch .interrupted {
    } catch {
      failure = SpecRunner.fileError(path, error)
    }
    let results = log.take() + (failure.map { [$0] } ?? [])
    return SpecFileResult(path: path, results: results, duration: SpecClock.now() - started)
  }

  /// Puts the runtime back as it was before its first file; false when
  /// that cannot be done exactly (or it is not reusable): it must then be
  /// discarded.
  func restore() async -> Bool {
    guard reusable else { return false }
    return (try? await runtime.perform { core in core.restorePristine() }) ?? false
  }
}
