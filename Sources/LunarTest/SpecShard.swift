/// One of N shards of a suite (`--shard I/N`): a deterministic part of its
/// spec files, so N machines running shards 1…N run every file once.
///
/// Files are dealt out by weight, heaviest first, each to the shard with
/// the least weight so far (the fewest files, then the lowest number, on a
/// tie). A file's weight is its duration in the recorded durations when
/// any of the files has one (files without one count as the mean of those
/// that do), else its size in bytes. The plan depends only on the file list
/// and those weights: every shard must see the same durations.
public struct SpecShard: Sendable, Equatable {
  /// The shard's number, from 1.
  public let index: Int
  /// How many shards the suite is split into.
  public let count: Int

  /// A shard count past any CI's job limit is taken for a typo.
  public static let maximumCount = 10_000

  /// What the weights of a plan were.
  public enum Basis: Sendable, Equatable {
    case durations
    case fileSize
  }

  /// The shard `I/N`, or nil unless both are whole numbers (ASCII digits)
  /// with 1 ≤ I ≤ N ≤ `maximumCount`.
  public init?(parsing text: String) {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
      let index = Int(parts[0]), let count = Int(parts[1])
    else { return nil }
    self.init(index: index, count: count)
  }

  /// The shard `index` of `count`, or nil unless 1 ≤ index ≤ count ≤
  /// `maximumCount`.
  public init?(index: Int, count: Int) {
    guard 1 <= index, index <= count, count <= Self.maximumCount else { return nil }
    self.index = index
    self.count = count
  }

  /// This shard's files, in the order `files` gives them, and what they
  /// were weighed by; `size` gives a file's size in bytes.
  public func files(
    of files: [String], durations: SpecDurations?, size: (String) -> Int? = FileSystem.size
  ) -> (files: [String], basis: Basis) {
    let known = files.compactMap { durations?.seconds(for: $0) }
    let basis: Basis = known.isEmpty ? .fileSize : .durations
    let weights: [Double]
    switch basis {
    case .durations:
      let mean = known.reduce(0, +) / Double(known.count)
      weights = files.map { durations?.seconds(for: $0) ?? mean }
    case .fileSize:
      weights = files.map { Double(size($0) ?? 0) }
    }
    let shard = Self.assign(files: files, weights: weights, shards: count)
    return (files.indices.filter { shard[$0] == index - 1 }.map { files[$0] }, basis)
  }

  /// Each file's shard (from 0): heaviest first, to the lightest shard.
  static func assign(files: [String], weights: [Double], shards: Int) -> [Int] {
    let order = files.indices.sorted { a, b in
      if weights[a] != weights[b] { return weights[a] > weights[b] }
      if files[a] != files[b] { return files[a] < files[b] }
      return a < b
    }
    // Past one shard per file, the rest stay empty: no need to hold them.
    let used = min(shards, files.count)
    var loads = [Double](repeating: 0, count: used)
    var counts = [Int](repeating: 0, count: used)
    var shard = [Int](repeating: 0, count: files.count)
    for file in order {
      var best = 0
      for candidate in 1..<max(used, 1) where (loads[candidate], counts[candidate]) < (loads[best], counts[best]) {
        best = candidate
      }
      shard[file] = best
      loads[best] += weights[file]
      counts[best] += 1
    }
    return shard
  }
}
