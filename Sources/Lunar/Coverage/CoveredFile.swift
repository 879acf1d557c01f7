/// One file's line coverage: how often each line that holds code ran.
public struct CoveredFile: Sendable, Equatable {
  /// The file's absolute path, as bytes (a path need not be text).
  public let path: [UInt8]
  /// Hits by line number, for every executable line (0: never ran).
  public var hits: [Int: UInt64]

  /// A file with these hits.
  public init(path: [UInt8], hits: [Int: UInt64]) {
    self.path = path
    self.hits = hits
  }

  /// Lines that hold code.
  public var lineCount: Int { hits.count }
  /// Lines that ran at least once.
  public var hitCount: Int { hits.values.count { $0 > 0 } }

  /// Adds another run's counts of the same file.
  mutating func add(_ other: [Int: UInt64]) {
    hits.merge(other) { $0 &+ $1 }
  }
}
