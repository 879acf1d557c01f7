import Foundation
import Testing
import TestSupport

/// The guide's two pictures are what lunar makes now (`scripts/pictures`
/// makes them again): the SVG of `examples/release_train.lua`, shown by the
/// README and docs/machines.md, and the gantt chart of a run of it, in
/// docs/workflows.md.
@Suite struct ReadmePictureTests {
  static let root = InstallTests.root

  /// `text` with every number as `0`: Graphviz places text by the fonts it
  /// finds, and a run has its own times; what is drawn stays.
  static func withoutNumbers(_ text: String) -> String {
    text.replacing(#/\d+(?:\.\d+)?/#, with: "0")
  }

  @Test func theSVGIsWhatLunarGraphDraws() async throws {
    let drawn = try await LunarProcess.run(["graph", "examples/release_train.lua", "--format", "svg"], in: Self.root)
    #expect(drawn.status == 0, "\(drawn.stderr)")
    let committed = try String(contentsOf: Self.root.appendingPathComponent("docs/images/release_train.svg"), encoding: .utf8)
    #expect(Self.withoutNumbers(committed) == Self.withoutNumbers(drawn.stdout), "run scripts/pictures")
    let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
    #expect(readme.contains("](docs/images/release_train.svg)"), "the README shows it")
    let machines = try String(contentsOf: Self.root.appendingPathComponent("docs/machines.md"), encoding: .utf8)
    #expect(machines.contains("](images/release_train.svg)"), "docs/machines.md shows it")
  }

  @Test func theGanttChartIsWhatRunsShowWrites() async throws {
    let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/workflows.md"), encoding: .utf8)
    let block = try #require(
      guide.firstMatch(of: #/\n<!-- gantt: [^\n]*-->\n```mermaid\n(.*?)```\n<!-- gantt end -->\n/#.dotMatchesNewlines()),
      "docs/workflows.md holds the chart between its markers")
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let ran = try await LunarProcess.run(["run", "--store", store, "examples/release_train.lua"], in: Self.root)
    #expect(ran.status == 0, "\(ran.stderr)")
    let chart = try await LunarProcess.run(
      ["runs", "show", "last", "--store", store, "--format", "gantt"], in: Self.root, environment: ["TZ": "UTC"])
    #expect(chart.status == 0, "\(chart.stderr)")
    #expect(Self.withoutNumbers(String(block.1)) == Self.withoutNumbers(chart.stdout), "run scripts/pictures")
    #expect(MermaidGantt(String(block.1)).problems.isEmpty)
  }
}
