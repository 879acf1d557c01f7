import LuaKit
import Lunar

#if canImport(Glibc)
import Glibc
#endif

/// Runs spec files, each in a runtime of its own (own Lua state, own thread,
/// the virtual clock) or in one restored as it was before any file ran
/// (`SpecRuntime`), several at once, and collects their results in file
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
    await runCounting(files: files, onFile: onFile).results
  }

  /// `run`, and how the files' runtimes were got.
  func runCounting(files: [String], onFile: @escaping @Sendable (SpecFileResult) -> Void = { _ in }) async
    -> (results: [SpecFileResult], runtimes: SpecRuntimePool.Statistics)
  {
    let interruptsBefore = Runtime.interruptCount
    var order = files
    if options.shuffle {
      var generator = SeededGenerator(seed: UInt64(bitPattern: options.seed))
      order.shuffle(using: &generator)
    }
    let jobs = min(max(1, options.jobs), max(1, order.count))
    // One runtime more than the jobs: it is restored (or set up) while the
    // files run, and the next file takes it.
    // A runtime is restored between files only when nothing outside its
    // Lua state follows it file by file: a trace file gets each file's
    // events in a sink made for that file (so each file gets a runtime of
    // its own, made when it starts), and coverage counts what each runtime
    // ran when it closes.
    let tracing = options.traceSink != nil
    let pool = SpecRuntimePool(
      size: tracing ? 0 : min(jobs + 1, order.count), files: tracing ? 0 : order.count, options: options,
      reuses: options.reusesRuntimes && options.coverage == nil)
    var results = [SpecFileResult?](repeating: nil, count: order.count)
    await withTaskGroup(of: (Int, SpecFileResult).self) { group in
      var next = 0
      func startNext() {
        guard next < order.count else { return }
        if options.catchesInterrupts && Runtime.interruptCount > interruptsBefore { return }
        let index = next
        let path = order[index]
        next += 1
        group.addTask {
          if tracing { return (index, await runFile(path)) }
          return (index, await runFile(path, in: pool, interruptsBefore: interruptsBefore))
        }
      }
      for _ in 0..<jobs { startNext() }
      for await (index, result) in group {
        results[index] = result
        onFile(result)
        startNext()
      }
    }
    var finished = results.compactMap { $0 }
    for path in await pool.close() {
      let late = Self.cleanUpFailure(path)
      onFile(late)
      finished.append(late)
    }
    return (finished, pool.statistics)
  }

  /// Runs one file in a new runtime. The tests that finished are kept
  /// whatever stops the file; an interrupted file adds nothing more.
  public func runFile(_ path: String) async -> SpecFileResult {
    let started = SpecClock.now()
    do {
      let runtime = try await SpecRuntime(options: options, reusable: false, traceSink: options.traceSink?(path))
      return await runtime.run(path, interruptsBefore: Runtime.interruptCount)
    } catch {
      return Self.setUpFailure(path, error, started: started)
    }
  }

  /// Runs one file in a runtime from `pool`, then gives it back; a Ctrl-C
  /// after `interruptsBefore` stops it.
  private func runFile(_ path: String, in pool: SpecRuntimePool, interruptsBefore: Int) async -> SpecFileResult {
    let started = SpecClock.now()
    switch await pool.take() {
    case .success(let runtime):
      let result = await runtime.run(path, interruptsBefore: interruptsBefore)
      pool.giveBack(runtime)
      return result
    case .failure(let error):
      return Self.setUpFailure(path, error, started: started)
    }
  }

  /// A file whose clean-up (the finalizers of what it made) did not end:
  /// an error of that file, after its tests.
  private static func cleanUpFailure(_ path: String) -> SpecFileResult {
    let message = "the clean-up after this file did not finish in \(Int(SpecRuntimePool.cleanUpGrace)) s"
      + " (a finalizer, __gc, that never returns?); it was left running"
    let result = SpecResult(name: path + " (clean-up)", status: .error, message: message, position: path, element: fileElement(path))
    return SpecFileResult(path: path, results: [result], duration: SpecRuntimePool.cleanUpGrace)
  }

  /// A file whose runtime could not be set up: an error of that file.
  private static func setUpFailure(_ path: String, _ error: any Error, started: Double) -> SpecFileResult {
    let result = SpecResult(name: path, status: .error, message: "\(error)", position: path, element: fileElement(path))
    return SpecFileResult(path: path, results: [result], duration: SpecClock.now() - started)
  }

  /// What a runtime runs once, when it is set up for the files
  /// (`lua/setup.lua`): sets the paths, and keeps the options as a table in
  /// the DSL's runner.
  static let setUpChunk = PackageResources.setup_lua

  /// The arguments of `setUpChunk`: `--lpath`, `--cpath` (or nil) and the
  /// options.
  static func setUpArguments(_ options: SpecOptions) -> [LuaValue] {
    [
      options.luaPath.map { .string(LuaString($0)) } ?? .nil,
      options.luaCPath.map { .string(LuaString($0)) } ?? .nil,
      luaOptions(options),
    ]
  }

  /// The main chunk run for each file (`lua/driver.lua`): hands the file
  /// to the DSL's runner with the options; the results reach the runner
  /// through the plugin's log.
  static let driver = String(decoding: PackageResources.driver_lua, as: UTF8.self)

  /// The options as the Lua runner reads them.
  static func luaOptions(_ options: SpecOptions) -> LuaValue {
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

  /// A failure of the file outside its tests, as a result of the file.
  static func fileError(_ path: String, _ failure: RunFailure) -> SpecResult {
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
}
