import Foundation
import Testing
import TestSupport

/// `lunar graph FILE --format svg`: the DOT drawings, drawn by Graphviz's
/// real `dot` into one SVG file that any XML reader reads.
@Suite struct GraphPictureTests {
  @Test func oneMachineIsDotsOwnPicture() async throws {
    let outcome = try await LunarProcess.run(["graph", "--format", "svg", "-"], input: GraphCommandTests.script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stderr.isEmpty)
    let svg = try SVGDocument(Data(outcome.stdout.utf8))
    #expect(svg.root == "svg")
    #expect(svg.counts["svg"] == 1)
    for state in ["initial", "loading", "presenting", "refreshing"] { #expect(svg.texts.contains(state), "\(svg.texts)") }
    #expect(svg.texts.filter { $0 == "reload" }.count == 2 && svg.texts.filter { $0 == "loaded" }.count == 2)
    // The same picture dot draws from `--format dot`.
    let dot = try await LunarProcess.run(["graph", "--format", "dot", "-"], input: GraphCommandTests.script)
    #expect(try Graphviz.draw(dot.stdout).svg == outcome.stdout)
  }

  @Test func aWorkflowAndItsMachinesAreStackedInOnePicture() async throws {
    let outcome = try await LunarProcess.run(["graph", "--format", "svg", "release_train.lua"], in: ExampleTests.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let svg = try SVGDocument(Data(outcome.stdout.utf8))
    #expect(svg.root == "svg")
    // The outer picture and one nested picture per drawing.
    #expect(svg.counts["svg"] == 3, "\(svg.counts)")
    #expect(svg.titles.prefix(1) == ["release-train"] && svg.titles.contains("release"), "\(svg.titles)")
    for name in ["build_eu", "build_us", "approve", "ship", "announce", "draft", "approved", "shipping", "live"] {
      #expect(svg.texts.contains(name), "\(name) is drawn: \(svg.texts)")
    }
    // Ids stay unique across the pictures.
    let ids = outcome.stdout.matches(of: #/ id="([^"]*)"/#).map { String($0.1) }
    #expect(!ids.isEmpty && Set(ids).count == ids.count, "\(ids)")
    // Each nested picture sits below the one before it.
    let placed = outcome.stdout.matches(of: #/<svg x="0" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"/#).map {
      (y: Double($0.1)!, height: Double($0.2)!)
    }
    #expect(placed.count == 2 && placed[0].y == 0 && placed[1].y >= placed[0].height, "\(placed)")
  }

  @Test func everyNameIsShownInWellFormedSVG() async throws {
    let states = HostileNames.all.map { "[\(HostileNames.lua($0.bytes))] = {}" }.joined(separator: ", ")
    let script = """
      local machine = require 'lunar.machine'
      machine.new { name = 'hostile <&> names', initial = \(HostileNames.lua(HostileNames.all[0].bytes)), states = { \(states) } }
      """
    let outcome = try await LunarProcess.run(["graph", "--format", "svg", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let svg = try SVGDocument(Data(outcome.stdout.utf8))
    #expect(svg.titles.first == "hostile <&> names")
    // Graphviz writes some spaces as no-break spaces.
    let shown = Set(svg.texts.map { $0.replacingOccurrences(of: "\u{A0}", with: " ") })
    for name in HostileNames.all {
      #expect(shown.contains(name.display), "\(name.display.debugDescription) is drawn")
    }
  }

  @Test func withoutDotThereIsOneErrorLine() async throws {
    let empty = try TemporaryFolder()
    let outcome = try await LunarProcess.run(
      ["graph", "--format", "svg", "-"], input: GraphCommandTests.script, environment: ["PATH": empty.url.path])
    #expect(outcome.status == 1)
    #expect(outcome.stdout.isEmpty)
    #expect(outcome.stderr == "lunar: cannot draw SVG: Graphviz's dot is not on PATH (install Debian's graphviz package)\n")
  }

  @Test func aFailingDotIsOneErrorLine() async throws {
    // Graphviz without its plugins (an empty plugin folder) knows no SVG.
    let noPlugins = try TemporaryFolder()
    let outcome = try await LunarProcess.run(
      ["graph", "--format", "svg", "-"], input: GraphCommandTests.script, environment: ["GVBINDIR": noPlugins.url.path])
    #expect(outcome.status == 1)
    #expect(outcome.stdout.isEmpty)
    let lines = outcome.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(outcome.stderr)")
    #expect(lines.first?.hasPrefix("lunar: dot -Tsvg failed (exit status 1): ") == true, "\(outcome.stderr)")
    #expect(outcome.stderr.contains("\"svg\" not recognized"), "dot's own reason: \(outcome.stderr)")
  }
}
