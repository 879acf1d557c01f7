import LuaKit
import Lunar
import LunarTest

/// `--trace-file FILE` and `--trace-format jsonl|chrome`, for `lunar run`
/// and `lunar test`: the file the runtime's events go to, and its format
/// (JSON lines as they happen, or a Chrome trace written at the end).
struct TraceFileOption {
  /// The formats, by the names `--trace-format` takes.
  enum Format: String, CaseIterable {
    case jsonl, chrome
  }

  /// The two flags, as `lunar run` and `lunar test` list them.
  static let specs = [
    OptionSpec(name: "trace-file", value: "FILE", help: "write the runtime's events to FILE (JSON lines, or see --trace-format)"),
    OptionSpec(
      name: "trace-format", value: "jsonl|chrome",
      help: "--trace-file's format: jsonl (default) or chrome (a timeline for ui.perfetto.dev or chrome://tracing)"),
  ]

  /// The file.
  let path: String
  /// Its format.
  let format: Format

  /// What the command line asks for, or nil without `--trace-file`; an
  /// unknown format, or a format without a file, is a usage error.
  static func parse(_ parsed: ParsedArguments, command: String) throws(UsageError) -> TraceFileOption? {
    var format = Format.jsonl
    if let name = parsed.value("trace-format") {
      guard let chosen = Format(rawValue: name) else {
        let known = Format.allCases.map { "'\($0.rawValue)'" }.joined(separator: " or ")
        throw UsageError(message: "--trace-format is \(known), got '\(name)'", command: command)
      }
      format = chosen
    }
    guard let path = parsed.value("trace-file") else {
      if parsed.has("trace-format") {
        throw UsageError(message: "--trace-format sets the format of --trace-file FILE, which is missing", command: command)
      }
      return nil
    }
    return TraceFileOption(path: path, format: format)
  }

  /// For `lunar run`: adds the sink to `configuration`; returns the Chrome
  /// trace to write once the run has ended, named `process` in it.
  func install(in configuration: inout RuntimeConfiguration, process: String) throws(FileOutput.OpenError)
    -> ChromeTraceFile?
  {
    switch format {
    case .jsonl:
      configuration.traceSinks.append(try JSONLinesTraceSink(path: path))
      return nil
    case .chrome:
      let file = try ChromeTraceFile(path: path)
      configuration.traceSinks.append(file.process(named: process))
      return file
    }
  }

  /// For `lunar test`: gives each spec file's runtime a sink of its own,
  /// all writing to the one file (JSON lines carry the spec file's name
  /// in front; in a Chrome trace each spec file is a process, at the time
  /// it started); returns the Chrome trace to write once every file ran.
  func install(in options: inout SpecOptions) throws(FileOutput.OpenError) -> ChromeTraceFile? {
    switch format {
    case .jsonl:
      let sink = try JSONLinesTraceSink(path: path)
      options.traceSink = { file in TaggedTraceSink(sink, tag: .init("file", .string(LuaString(file)))) }
      return nil
    case .chrome:
      let file = try ChromeTraceFile(path: path)
      let origin = SpecClock.now()
      options.traceSink = { path in file.process(named: path, mainTrack: "tests", offset: SpecClock.now() - origin) }
      return file
    }
  }
}
