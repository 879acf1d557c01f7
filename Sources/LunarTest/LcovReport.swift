import Lunar

/// A run's line coverage as an lcov tracefile (`coverage/lcov.info`), the
/// format lcov's `geninfo` writes and `lcov`/`genhtml` read: for each file
/// its absolute path (`SF:`), a `DA:line,hits` for every line that holds
/// code, the lines found and hit (`LF:`, `LH:`) and `end_of_record`.
public struct LcovReport: Sendable {
  /// The files counted, sorted by path.
  public let files: [CoveredFile]

  /// The files of `coverage` that `scope` counts.
  public init(_ coverage: LineCoverage, scope: CoverageScope) {
    files = coverage.coveredFiles.filter { scope.includes($0.path) }
  }

  /// What Lunar's lcov files begin with (the test name is `lunar`), so a
  /// new report replaces an earlier one but never another file.
  public static let kind = FileOutput.Kind.starting(with: [header], name: "an lcov file Lunar wrote")
  private static let header = "TN:lunar\n"

  /// Lines that hold code, in every file.
  public var lineCount: Int { files.reduce(0) { $0 + $1.lineCount } }
  /// Lines that ran, in every file.
  public var hitCount: Int { files.reduce(0) { $0 + $1.hitCount } }

  /// The tracefile's bytes.
  public var bytes: [UInt8] {
    var out = Array(Self.header.utf8)
    for file in files {
      out += Array("SF:".utf8) + file.path + [UInt8(ascii: "\n")]
      for line in file.hits.keys.sorted() {
        out += Array("DA:\(line),\(file.hits[line]!)\n".utf8)
      }
      out += Array("LF:\(file.lineCount)\nLH:\(file.hitCount)\nend_of_record\n".utf8)
    }
    return out
  }

  /// The line `lunar test` prints: `coverage: 83.3% of 6 lines in 2 files
  /// (coverage/lcov.info)`.
  public func summary(path: String) -> String {
    guard lineCount > 0 else { return "coverage: no lines of the project's Lua files were loaded (\(path))" }
    let files = files.count == 1 ? "1 file" : "\(files.count) files"
    return "coverage: \(Self.percent(hitCount, of: lineCount)) of \(lineCount) lines in \(files) (\(path))"
  }

  /// `hit` of `total` with one decimal, as lcov shows a rate: 100.0% only
  /// when every line ran, 0.0% only when none did.
  static func percent(_ hit: Int, of total: Int) -> String {
    var tenths = Int((Double(hit) * 1000 / Double(total)).rounded(.toNearestOrEven))
    if tenths == 1000 && hit < total { tenths = 999 }
    if tenths == 0 && hit > 0 { tenths = 1 }
    return "\(tenths / 10).\(tenths % 10)%"
  }
}
