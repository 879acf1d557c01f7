/// The outcome of one test (or of a hook, block body or file that failed
/// outside any test), as busted counts them.
public struct SpecResult: Sendable, Codable, Equatable {
  /// busted's four outcomes, plus `listed` for `--list`.
  public enum Status: String, Sendable, Codable {
    case success, failure, error, pending, listed
  }

  /// The full name: enclosing block names and the test's, space-separated.
  public var name: String
  /// How it ended.
  public var status: Status
  /// The failure or error message (the reason, for pending).
  public var message: String?
  /// `file:line` of the failure, error or test.
  public var position: String?
  /// The traceback of an error or failure.
  public var traceback: String?
  /// CPU seconds the test body took.
  public var duration: Double
  /// `#tags` from its name and its blocks' names.
  public var tags: [String]
  /// What busted's reports copy of the test, block or hook, when the run
  /// asked for it (`SpecOptions.details`).
  public var element: SpecElement?
  /// Where the failure, error or pending call was raised, when the run
  /// asked for details (`traceback` is its traceback).
  public var frame: SpecTrace?

  public init(
    name: String, status: Status, message: String? = nil, position: String? = nil, traceback: String? = nil,
    duration: Double = 0, tags: [String] = [], element: SpecElement? = nil, frame: SpecTrace? = nil
  ) {
    self.name = name
    self.status = status
    self.message = message
    self.position = position
    self.traceback = traceback
    self.duration = duration
    self.tags = tags
    self.element = element
    self.frame = frame
  }
}

/// A test, block or hook as busted's reports copy it: its own name (none
/// for a hook declared without one), what declared it and where, and when
/// it started and ended.
public struct SpecElement: Sendable, Codable, Equatable {
  /// The name it was declared with (not the full name).
  public var name: String?
  /// `it`, `pending`, `describe`, `file`, or the hook (`before_each`…).
  public var descriptor: String
  /// busted's attributes of the kind (`envmode`); nil when busted has none.
  public var attributes: [String: String]?
  /// Where it was declared.
  public var trace: SpecTrace?
  /// CPU seconds (`os.clock`) at its start and end.
  public var startTick: Double?
  public var endTick: Double?
  /// The runtime's clock (virtual in a spec) at its start and end.
  public var startTime: Double?
  public var endTime: Double?
  /// `endTick - startTick`, once it ended.
  public var duration: Double?

  public init(name: String?, descriptor: String, attributes: [String: String]? = nil, trace: SpecTrace? = nil) {
    self.name = name
    self.descriptor = descriptor
    self.attributes = attributes
    self.trace = trace
  }

  enum CodingKeys: String, CodingKey {
    case name, descriptor, attributes, trace, duration
    case startTick = "starttick", endTick = "endtick", startTime = "starttime", endTime = "endtime"
  }
}

/// A place in a spec file as busted's traces give it: `debug.getinfo`'s
/// fields for the frame, and the traceback from it when one was taken.
public struct SpecTrace: Sendable, Codable, Equatable {
  /// The chunk's name (`@spec/x_spec.lua`).
  public var source: String
  /// The chunk's name as messages print it (`spec/x_spec.lua`).
  public var shortSource: String
  /// The line running in the frame.
  public var currentLine: Int
  /// The first and last lines of the frame's function (0 for a main chunk).
  public var lineDefined: Int
  public var lastLineDefined: Int
  /// `Lua`, `main` or `C`.
  public var what: String
  /// busted's traceback from the frame (`\nstack traceback:\n\t…\n`).
  public var traceback: String?

  public init(
    source: String, shortSource: String, currentLine: Int, lineDefined: Int, lastLineDefined: Int, what: String,
    traceback: String? = nil
  ) {
    self.source = source
    self.shortSource = shortSource
    self.currentLine = currentLine
    self.lineDefined = lineDefined
    self.lastLineDefined = lastLineDefined
    self.what = what
    self.traceback = traceback
  }

  enum CodingKeys: String, CodingKey {
    case source, what, traceback
    case shortSource = "short_src", currentLine = "currentline", lineDefined = "linedefined"
    case lastLineDefined = "lastlinedefined"
  }
}

/// Everything one spec file produced.
public struct SpecFileResult: Sendable, Equatable {
  /// The file, as given or found.
  public var path: String
  /// Its results in the order they happened.
  public var results: [SpecResult]
  /// Wall-clock seconds the file took.
  public var duration: Double
}

/// Counts over a whole run.
public struct SpecSummary: Sendable, Equatable, CustomStringConvertible {
  public var passed = 0
  public var failed = 0
  public var errors = 0
  public var pending = 0

  /// Counts the results of every file.
  public init(_ files: [SpecFileResult]) {
    for result in files.flatMap(\.results) {
      switch result.status {
      case .success: passed += 1
      case .failure: failed += 1
      case .error: errors += 1
      case .pending: pending += 1
      case .listed: break
      }
    }
  }

  /// True when nothing failed or errored (pending is fine).
  public var succeeded: Bool { failed == 0 && errors == 0 }

  /// `N passed, N failed, N errors, N pending`.
  public var description: String {
    "\(passed) passed, \(failed) failed, \(errors) errors, \(pending) pending"
  }

  /// Whether `line` reads as a summary's `description`.
  static func looksLikeSummary(_ line: String) -> Bool {
    let words = line.split(separator: " ")
    guard words.count == 8 else { return false }
    return zip(stride(from: 1, to: 8, by: 2), ["passed,", "failed,", "errors,", "pending"]).allSatisfy { index, word in
      words[index] == word && !words[index - 1].isEmpty && words[index - 1].allSatisfy { $0.isASCII && $0.isNumber }
    }
  }
}
