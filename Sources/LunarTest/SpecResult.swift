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

  public init(
    name: String, status: Status, message: String? = nil, position: String? = nil, traceback: String? = nil,
    duration: Double = 0, tags: [String] = []
  ) {
    self.name = name
    self.status = status
    self.message = message
    self.position = position
    self.traceback = traceback
    self.duration = duration
    self.tags = tags
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
