import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// `lunar test -o json` and `-o junit` beside Debian's busted 2.1.1 on one
/// suite (passing, failing, erroring and pending tests in nested blocks, a
/// failing hook, a failing block body and a file that cannot be loaded).
///
/// What is compared: the whole document, key by key and element by
/// element (same keys and attributes, same values), except the clock
/// readings, which only have to be there and be numbers: `duration`,
/// `starttick`, `endtick`, `starttime`, `endtime` in JSON, `time` and
/// `timestamp` in JUnit. Traces are compared in full (positions, messages
/// and tracebacks), since both take them from the same frames of the same
/// files. A JSON list's order is busted's (files that cannot be loaded
/// first, then as the tests ran); JSON key order is not compared, since
/// busted's JSON library writes keys in hash order.
@Suite struct BustedReportTests {
  static let busted = "/usr/bin/busted"

  /// The suite. busted's own JSON handler cannot write a `pending("name")`
  /// block (its element holds a function), so the pending tests here call
  /// `pending` inside the test.
  static let files = [
    "spec/a_report_spec.lua": """
      describe("outer", function()
        describe("inner", function()
          it("passes", function() assert.are.equal(1, 1) end)
          it("fails", function() assert.are.equal(1, 2) end)
        end)
        it("errors", function() error("boom") end)
        it("errors without a position", function() error("no position", 0) end)
        it("pends inside", function() pending("not yet") end)
        describe("hooked", function()
          before_each(function() error("hook broke") end)
          it("never runs", function() end)
        end)
        insulate("insulated", function()
          it("passes too", function() end)
        end)
      end)
      describe("broken body", function()
        error("body broke")
      end)
      it("top level", function() end)

      """,
    "spec/b_report_spec.lua": """
      context("second file", function()
        setup(function() end)
        describe("deeper", function()
          describe("deepest", function()
            spec("passes", function() assert.is_true(true) end)
            test("fails", function() assert.is_true(false) end)
          end)
        end)
        describe("set up badly", function()
          setup(function() error("setup broke") end)
          it("never runs", function() end)
        end)
        it("pends", function() pending("later") end)
        after_each(function() end)
      end)

      """,
    "spec/c_report_spec.lua": """
      describe("broken", function()
        it("x" function() end)
      end)

      """,
  ]

  /// The folder with the suite, and busted's and Lunar's reports of it.
  func reports(_ format: String) async throws -> (busted: Data, lunar: Data) {
    let folder = try TemporaryFolder()
    for (name, text) in Self.files { _ = try folder.write(name, text) }
    let reference = Process()
    reference.executableURL = URL(fileURLWithPath: Self.busted)
    reference.arguments = ["-o", format, "spec"]
    reference.currentDirectoryURL = folder.url
    let output = try TemporaryFile()
    reference.standardOutput = output.handle
    reference.standardError = FileHandle.nullDevice
    try reference.run()
    #expect(await ChildProcess.wait(for: reference, timeout: 60))
    let lunar = try await LunarProcess.run(["test", "--jobs", "2", "--output=\(format)", "spec"], in: folder.url, timeout: 60)
    #expect(lunar.status == 1)
    #expect(lunar.stderr == "")
    return (try Data(contentsOf: output.url), Data(lunar.stdout.utf8))
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: busted)))
  func jsonReportIsBustedsJSON() async throws {
    let (busted, lunar) = try await reports("json")
    let expected = try JSONSerialization.jsonObject(with: busted)
    let actual = try JSONSerialization.jsonObject(with: lunar)
    // The suite's outcomes, so an empty document cannot pass.
    let counts = ["successes", "failures", "errors", "pendings"].map { ((expected as? [String: Any])?[$0] as? [Any])?.count }
    #expect(counts == [4, 2, 6, 2])
    compare(actual, expected, at: "$")
  }

  /// Clock readings: present in both, numbers in both, values free.
  static let clockKeys: Set<String> = ["duration", "starttick", "endtick", "starttime", "endtime"]

  func compare(_ actual: Any, _ expected: Any, at path: String) {
    switch (actual, expected) {
    case (let actual as [String: Any], let expected as [String: Any]):
      #expect(Set(actual.keys) == Set(expected.keys), "keys of \(path)")
      for (key, value) in expected {
        guard let mine = actual[key] else { continue }
        if Self.clockKeys.contains(key) {
          #expect(mine is NSNumber && value is NSNumber, "\(path).\(key) is a number")
        } else {
          compare(mine, value, at: "\(path).\(key)")
        }
      }
    case (let actual as [Any], let expected as [Any]):
      #expect(actual.count == expected.count, "length of \(path)")
      for (index, (mine, theirs)) in zip(actual, expected).enumerated() {
        compare(mine, theirs, at: "\(path)[\(index)]")
      }
    default:
      #expect((actual as? NSObject)?.isEqual(expected) == true, "\(path): \(actual) is not \(expected)")
    }
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: busted)))
  func junitReportIsBustedsJUnit() async throws {
    let (busted, lunar) = try await reports("junit")
    let expected = try #require(try XMLDocument(data: busted).rootElement())
    let actual = try #require(try XMLDocument(data: lunar).rootElement())
    #expect(try expected.nodes(forXPath: "//testcase").count == 10)
    compare(actual, expected, at: "/")
  }

  /// Clock readings of the JUnit report.
  static let clockAttributes: Set<String> = ["time", "timestamp"]

  func compare(_ actual: XMLElement, _ expected: XMLElement, at path: String) {
    let here = "\(path)\(expected.name ?? "?")"
    #expect(actual.name == expected.name, "\(here) is \(actual.name ?? "?")")
    let attributes = { (element: XMLElement) in
      Dictionary((element.attributes ?? []).map { ($0.name ?? "", $0.stringValue ?? "") }, uniquingKeysWith: { a, _ in a })
    }
    let mine = attributes(actual)
    let theirs = attributes(expected)
    #expect(Set(mine.keys) == Set(theirs.keys), "attributes of \(here)")
    for (name, value) in theirs where !Self.clockAttributes.contains(name) {
      #expect(mine[name] == value, "\(here)@\(name)")
    }
    let children = { (element: XMLElement) in (element.children ?? []).compactMap { $0 as? XMLElement } }
    let myChildren = children(actual)
    let theirChildren = children(expected)
    #expect(myChildren.count == theirChildren.count, "children of \(here)")
    if theirChildren.isEmpty {
      #expect(actual.stringValue == expected.stringValue, "text of \(here)")
    }
    for (index, (mine, theirs)) in zip(myChildren, theirChildren).enumerated() {
      compare(mine, theirs, at: "\(here)/[\(index)]")
    }
  }
}
