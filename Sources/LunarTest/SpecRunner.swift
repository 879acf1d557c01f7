import LuaKit
import Lunar

#if canImport(Glibc)
import Glibc
#endif

/// Runs spec files, each in its own runtime (own Lua state, own thread, the
/// virtual clock), several at once, and collects their results in file
/// order.
public struct SpecRunner: Sendable {
  /// What to run and how.
  public var options: SpecOptions

  /// A runner with these options.
  public init(options: SpecOptions) { self.options = options }

  /// The spec files the options select, in a stable order.
  public func discoverFiles() throws -> [String] {
    let matcher = try PatternMatcher()
    var files: [String] = []
    for path in options.paths {
      if FileSystem.isDirectory(path) {
        for file in FileSystem.luaFiles(under: path) {
          let name = FileSystem.baseName(file)
          guard try matcher.find(options.pattern, in: name) else { continue }
          if try options.excludePatterns.contains(where: { try matcher.find($0, in: name) }) { continue }
          files.append(file)
        }
      } else {
        files.append(path)
      }
    }
    return files
  }

  /// Runs every file; `onFile` sees each file's results as it finishes.
  /// With `catchesInterrupts`, Ctrl-C stops the files running (each keeps
  /// the tests that finished) and no further file starts.
  public func run(files: [String], onFile: @escaping @Sendable (SpecFileResult) -> Void = { _ in }) async
    -> [SpecFileResult]
  {
    let interruptsBefore = Runtime.interruptCount
    var order = files
    if options.shuffle {
      var generator = SeededGenerator(seed: UInt64(bitPattern: options.seed))
      order.shuffle(using: &generator)
    }
    let jobs = min(max(1, options.jobs), max(1, order.count))
    var results = [SpecFileResult?](repeating: nil, count: order.count)
    await withTaskGroup(of: (Int, SpecFileResult).self) { group in
      var next = 0
      func startNext() {
        guard next < order.count else { return }
        if options.catchesInterrupts && Runtime.interruptCount > interruptsBefore { return }
        let index = next
        let path = order[index]
        next += 1
        group.addTask { (index, await runFile(path, interruptsBefore: interruptsBefore)) }
      }
      for _ in 0..<jobs { startNext() }
      for await (index, result) in group {
        results[index] = result
        onFile(result)
        startNext()
      }
    }
    return results.compactMap { $0 }
  }

  /// Runs one file in a fresh runtime. The tests that finished are kept
  /// whatever stops the file; an interrupted file adds nothing more.
  public func runFile(_ path: String) async -> SpecFileResult {
    await runFile(path, interruptsBefore: Runtime.interruptCount)
  }

  /// Runs one file; a Ctrl-C after `interruptsBefore` stops it.
  func runFile(_ path: String, interruptsBefore: Int) async -> SpecFileResult {
    let started = SpecClock.now()
    let log = SpecResultLog()
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: SpecClock.epochNow())
    let traceSink = options.traceSink?(path)
    if let traceSink { configuration.traceSinks.append(traceSink) }
    configuration.plugins = options.plugins + [SpecPlugin(log: log, details: options.details, traceSink: traceSink)]
    configuration.environment = options.environment
    configuration.pluginDirectories = options.pluginDirectories
    configuration.runsLuaInit = false
    configuration.catchesInterrupts = options.catchesInterrupts
    configuration.coverage = options.coverage
    let source = Self.driver(options: luaOptions, luaPath: options.luaPath, luaCPath: options.luaCPath)
    let script = Script(source: .text(source, chunkName: "=lunar test"), arguments: [path])
    var results: [SpecResult]
    do {
      let runtime = try Runtime(configuration)
      // A Ctrl-C that came before this runtime caught interrupts stops it too.
      if options.catchesInterrupts && Runtime.interruptCount > interruptsBefore {
        throw RunFailure.interrupted("interrupted")
      }
      _ = try await runtime.run(script)
      results = log.results
    } catch RunFailure.interrupted {
      results = log.results
    } catch let failure as RunFailure {
      results = log.results + [Self.fileError(path, failure)]
    } catch {
      results = log.results + [
        SpecResult(name: path, status: .error, message: "\(error)", position: path, element: Self.fileElement(path))
      ]
    }
    return SpecFileResult(path: path, results: results, duration: SpecClock.now() - started)
  }

  /// The main chunk each file's runtime runs: sets the paths, then hands
  /// the file to the DSL's runner with the options as a table; the results
  /// reach the runner through the plugin's log.
  private static func driver(options: LuaValue, luaPath: String?, luaCPath: String?) -> String {
    var lines: [String] = []
    if let luaPath { lines.append("package.path = \(luaQuote(luaPath)) .. ';' .. package.path") }
    if let luaCPath { lines.append("package.cpath = \(luaQuote(luaCPath)) .. ';' .. package.cpath") }
    lines.append("local path = ...")
    lines.append("debug.getregistry()[\(luaQuote(SpecPlugin.runnerKey))].run_file(path, \(options.description))")
    return lines.joined(separator: "\n")
  }

  /// The options as the Lua runner reads them.
  var luaOptions: LuaValue {
    var table = LuaTable()
    table["tags"] = .table(LuaTable(array: options.tags.map { .string(LuaString($0)) }))
    table["exclude_tags"] = .table(LuaTable(array: options.excludeTags.map { .string(LuaString($0)) }))
    table["filter"] = .table(LuaTable(array: options.filters.map { .string(LuaString($0)) }))
    table["filter_out"] = .table(LuaTable(array: options.filtersOut.map { .string(LuaString($0)) }))
    table["list"] = .boolean(options.list)
    table["shuffle"] = .boolean(options.shuffle)
    table["seed"] = .integer(options.seed)
    table["details"] = .boolean(options.details)
    return .table(table)
  }

  private static func fileError(_ path: String, _ failure: RunFailure) -> SpecResult {
    var result: SpecResult
    switch failure {
    case .lua(let error):
      result = SpecResult(name: path, status: .error, message: error.message, position: error.chunk.map { "\($0):\(error.line ?? 0)" } ?? path, traceback: error.traceback)
    case .deadlock(let report):
      result = SpecResult(name: path, status: .error, message: report, position: path)
    case .interrupted(let message), .timedOut(let message), .usage(let message):
      result = SpecResult(name: path, status: .error, message: message, position: path)
    case .unobservedErrors(let errors):
      result = SpecResult(name: path, status: .error, message: errors.map(\.description).joined(separator: "\n"), position: path)
    }
    result.element = fileElement(path)
    return result
  }

  /// A failure of the file outside its tests is the file's, in busted's
  /// reports.
  private static func fileElement(_ path: String) -> SpecElement {
    SpecElement(name: path, descriptor: "file", attributes: ["envmode": "insulate"])
  }

  static func luaQuote(_ text: String) -> String {
    LuaValue.string(LuaString(text)).description
  }
}
