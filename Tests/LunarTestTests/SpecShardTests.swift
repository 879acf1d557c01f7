import Foundation
import Testing

@testable import LunarTest

/// How `--shard` deals files out, and the durations file it balances by.
@Suite struct SpecShardTests {
  @Test func shardsAreIOverN() {
    #expect(SpecShard(parsing: "2/3") == SpecShard(index: 2, count: 3))
    #expect(SpecShard(parsing: "01/03")?.index == 1)
    #expect(SpecShard(parsing: "10000/10000") != nil)
    for bad in ["0/3", "4/3", "1/0", "a/b", "1/3/4", "1/", "/3", "1", "", "+1/3", "-1/3", " 1/3", "1/3 ", "١/٣", "1/10001",
                "1/99999999999999999999999"] {
      #expect(SpecShard(parsing: bad) == nil, "\(bad)")
    }
  }

  /// Files whose weights vary and repeat, for `count` shards of them.
  func plan(files count: Int, shards: Int, durations: SpecDurations? = nil) -> [[String]] {
    let files = (0..<count).map { "spec/f\($0)_spec.lua" }
    let size: (String) -> Int? = { file in files.firstIndex(of: file).map { ($0 * 7919) % 13 } }
    return (1...shards).map { SpecShard(index: $0, count: shards)!.files(of: files, durations: durations, size: size).files }
  }

  @Test func everyFileGoesToExactlyOneShard() {
    for count in [0, 1, 2, 5, 12, 40] {
      for shards in 1...15 {
        let parts = plan(files: count, shards: shards)
        #expect(parts.joined().sorted() == (0..<count).map { "spec/f\($0)_spec.lua" }.sorted(), "\(count) files, \(shards) shards")
        // Each shard keeps the order the files were found in.
        for part in parts { #expect(part == part.sorted { Int($0.dropFirst(6).prefix { $0.isNumber })! < Int($1.dropFirst(6).prefix { $0.isNumber })! }) }
      }
    }
  }

  @Test func filesOfNoWeightAreSpreadEvenly() {
    let files = (1...6).map { "spec/empty\($0)_spec.lua" }
    let counts = (1...3).map { SpecShard(index: $0, count: 3)!.files(of: files, durations: nil, size: { _ in 0 }).files.count }
    #expect(counts == [2, 2, 2])
  }

  @Test func theHeaviestFilesAreDealtFirst() {
    let files = ["a", "b", "c", "d", "e"]
    let weights = ["a": 1.0, "b": 9, "c": 5, "d": 4, "e": 1]
    let durations = SpecDurations(seconds: weights)
    let parts = (1...2).map { SpecShard(index: $0, count: 2)!.files(of: files, durations: durations) }
    // b (9) to shard 1, c (5) and d (4) to shard 2, then a and e (1 each) even them.
    #expect(parts.map(\.files) == [["a", "b"], ["c", "d", "e"]])
    #expect(parts.allSatisfy { $0.basis == .durations })
  }

  @Test func filesWithoutADurationCountAsTheMeanOfTheOthers() {
    let files = ["a", "b", "c", "new"]
    let durations = SpecDurations(seconds: ["./a": 3, "b": 1, "c": 2, "gone": 100])
    let parts = (1...2).map { SpecShard(index: $0, count: 2)!.files(of: files, durations: durations).files }
    // new weighs 2, the mean of a, b and c (not of gone): a (3) to shard
    // 1, c (2) and new (2) to shard 2, b (1) back to shard 1.
    #expect(parts == [["a", "b"], ["c", "new"]])
  }

  @Test func withoutDurationsFilesAreWeighedBySize() {
    let files = ["a", "b", "c"]
    let sizes = ["a": 100, "b": 60, "c": 50]
    let shard = SpecShard(index: 1, count: 2)!.files(of: files, durations: SpecDurations(), size: { sizes[$0] })
    #expect(shard.files == ["a"])
    #expect(shard.basis == .fileSize)
  }

  @Test func durationsRoundTripThroughTheirFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durations-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("d.json").path
    #expect(try SpecDurations.load(path) == nil)
    let results = [
      SpecFileResult(path: "./spec/a_spec.lua", results: [], duration: 1.23456),
      SpecFileResult(path: "spec/\"odd\"\nname_spec.lua", results: [], duration: 0.5),
    ]
    let recorded = SpecDurations().recording(results, exists: { _ in true })
    try recorded.text.write(toFile: path, atomically: true, encoding: .utf8)
    let loaded = try #require(try SpecDurations.load(path))
    #expect(loaded == recorded)
    #expect(loaded.seconds(for: "spec/a_spec.lua") == 1.235)
    #expect(loaded.seconds(for: "./spec/a_spec.lua") == 1.235)
    // A later run replaces what it ran and drops files that are gone.
    let later = loaded.recording([SpecFileResult(path: "spec/b_spec.lua", results: [], duration: 2)], exists: { $0 == "spec/a_spec.lua" })
    #expect(later.seconds == ["spec/a_spec.lua": 1.235, "spec/b_spec.lua": 2])
  }

  @Test(arguments: ["not json", #"{"other":{}}"#, #"{"lunar-test-durations":{"a":"slow"}}"#, #"{"lunar-test-durations":{"a":-1}}"#])
  func aFileThatIsNotARecordingIsRefused(text: String) throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("durations-\(UUID()).json").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(throws: SpecDurations.FormatError.self) { try SpecDurations.load(path) }
  }
}
