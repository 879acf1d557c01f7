import Foundation
import LuaKit
import Testing

@testable import LunarTest

/// Spec files that misuse the DSL or luassert, or hand the runner names and
/// messages that are not text: each costs only the test it is in.
@Suite struct HostileSpecTests {
  /// Writes `source` as a spec file in a new temporary folder; returns its path.
  func specFile(_ source: String, named name: String = "hostile_spec.lua") throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let path = folder.appendingPathComponent(name).path
    try Data(source.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func aBadArgumentToAPublicFunctionIsAnErrorAtTheUsersLine() async throws {
    let path = try specFile("""
      describe("misuse", function()
        it("finally", function() finally(5) end)
        it("finally without", function() finally() end)
        it("spy.on", function() spy.on(nil, "x") end)
        it("spy.on key", function() spy.on({}) end)
        it("register", function() assert:register(5) end)
        it("register callback", function() assert:register("assertion", "x", 7) end)
        it("unregister", function() assert:unregister("assertion") end)
        it("add_formatter", function() assert:add_formatter(true) end)
        it("format", function() assert:format(nil) end)
        it("set_parameter", function() assert:set_parameter(nil, 1) end)
        it("add_spy", function() assert:add_spy({}) end)
        it("array", function() assert.array(5).has.no.holes() end)
        it("invokes", function() stub({}, "k").invokes(5) end)
        it("on_call_with", function() stub({}, "k").on_call_with(1).invokes(nil) end)
        it("bindfenv", function() require("busted").bindfenv(nil, "x", 1) end)
        it("runs after them", function() end)
      end)
      """)
    let file = await SpecRunner(options: SpecOptions()).runFile(path)
    #expect(!file.results.contains { $0.message?.contains("luassert:") == true || $0.message?.contains("busted:") == true })
    let expected: [String] = [
      "2: bad argument #1 to 'finally' (function expected, got number)",
      "3: bad argument #1 to 'finally' (function expected, got no value)",
      "4: bad argument #1 to 'spy.on' (table expected, got nil)",
      "5: bad argument #2 to 'spy.on' (key expected, got no value)",
      "6: bad argument #1 to 'assert:register' (string expected, got number)",
      "7: bad argument #3 to 'assert:register' (function expected, got number)",
      "8: bad argument #2 to 'assert:unregister' (string expected, got no value)",
      "9: bad argument #1 to 'assert:add_formatter' (function expected, got boolean)",
      "10: bad argument #1 to 'assert:format' (table expected, got nil)",
      "11: bad argument #1 to 'assert:set_parameter' (string expected, got nil)",
      "12: bad argument #1 to 'assert:add_spy' (spy expected, got table)",
      "13: bad argument #1 to 'array' (table expected, got number)",
      "14: bad argument #1 to 'invokes' (function expected, got number)",
      "15: bad argument #1 to 'invokes' (function expected, got nil)",
      "16: bad argument #1 to 'bindfenv' (function expected, got nil)",
    ]
    let statuses: [SpecResult.Status] = Array(repeating: .error, count: expected.count) + [.success]
    #expect(file.results.map(\.status) == statuses)
    for (result, message) in zip(file.results, expected) {
      let line = String(message.prefix { $0 != ":" })
      // Lua shortens a long path (`...` and its end): the file's name is kept.
      #expect(result.message?.hasSuffix("/hostile_spec.lua:" + message) == true, "\(result.name)")
      #expect(result.position?.hasSuffix("/hostile_spec.lua:" + line) == true, "\(result.name)")
    }
  }
}

extension HostileSpecTests {
  @Test func namesAndMessagesThatAreNotTextKeepTheirBytesEscaped() async throws {
    let path = try specFile(#"""
      describe("bytes \255", function()
        it("passes", function() end)
        it("compares", function() assert.are.equal("a\255", "b\254") end)
        it("errors", function() error("bad \253 byte") end)
        it("fails with a message", function() assert.is_true(false, "why \252") end)
        it("is named \254\xC3\xA9", function() end)
        pending("later \251")
      end)
      it("runs after them", function() end)
      """#)
    var options = SpecOptions()
    for details in [false, true] {
      options.details = details
      let file = await SpecRunner(options: options).runFile(path)
      #expect(file.results.map(\.name) == [
        "bytes \\255 passes", "bytes \\255 compares", "bytes \\255 errors", "bytes \\255 fails with a message",
        "bytes \\255 is named \\254é", "bytes \\255 later \\251", "runs after them",
      ])
      #expect(file.results.map(\.status) == [.success, .failure, .error, .failure, .success, .pending, .success])
      #expect(file.results[1].message?.contains("(string) 'b\\254'") == true)
      #expect(file.results[2].message?.hasSuffix(":4: bad \\253 byte") == true)
      #expect(file.results[3].message?.hasPrefix("why \\252\n") == true)
      #expect(SpecSummary([file]).description == "3 passed, 2 failed, 1 errors, 1 pending")
    }
  }

  @Test(arguments: [
    ([0x61, 0xFF, 0x62], "a\\255b"), ([0xC3, 0xA9], "é"), ([0xC3], "\\195"), ([0xE2, 0x82], "\\226\\130"),
    ([0xC0, 0xAF], "\\192\\175"), ([0xED, 0xA0, 0x80], "\\237\\160\\128"), ([0xF0, 0x9F, 0x98, 0x80, 0xF8], "😀\\248"),
    ([0x5C, 0x0A], "\\\n"),
  ] as [([UInt8], String)])
  func specTextEscapesOnlyTheBytesThatAreNotUTF8(bytes: [UInt8], text: String) {
    #expect(SpecText.of(LuaString(bytes: bytes)) == text)
  }
}

/// `LuaPatternCheck` agrees with Lua: a pattern it passes never makes Lua's
/// matcher raise an error, and the malformed pieces it finds are Lua's.
@Suite struct LuaPatternCheckTests {
  @Test(arguments: [
    ("[", "malformed pattern (missing ']')"), ("[^]", "malformed pattern (missing ']')"),
    ("[%]", "malformed pattern (missing ']')"), ("%", "malformed pattern (ends with '%')"),
    ("%b(", "malformed pattern (missing arguments to '%b')"), ("%fa", "missing '[' after '%f' in pattern"),
    ("(a%1)", "invalid capture index %1"), ("%0", "invalid capture index %0"), ("a)", "invalid pattern capture"),
    ("(", "unfinished capture"), (String(repeating: "()", count: 33), "too many captures"),
  ])
  func findsLuasErrors(pattern: String, problem: String) {
    #expect(LuaPatternCheck.problem(in: Array(pattern.utf8)) == problem)
  }

  @Test(arguments: ["[]]", "[^]]", "(a)%1", "()x", "%b()", "%f[%w]a", "^a$", "[%a-]", "%%", "a-*+?", ""])
  func passesWellFormedPatterns(pattern: String) throws {
    #expect(LuaPatternCheck.problem(in: Array(pattern.utf8)) == nil)
    let matcher = try PatternMatcher()
    _ = try matcher.find(pattern, in: "a]b()x")
  }

  @Test func aPatternItPassesNeverFailsAMatch() throws {
    let matcher = try PatternMatcher()
    let alphabet = Array("()[]%^$bf1a.-*]".utf8)
    let subjects = ["", "a", "a]b(1)f", "((a))", "b1a.-*]%^$"]
    var generator = SeededGenerator(seed: 26)
    for _ in 0..<5_000 {
      let length = Int.random(in: 0...6, using: &generator)
      let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0x61 }
      guard LuaPatternCheck.problem(in: bytes) == nil else { continue }
      let pattern = String(decoding: bytes, as: UTF8.self)
      for subject in subjects {
        #expect(throws: Never.self, "\(pattern) on \(subject)") { _ = try matcher.find(pattern, in: subject) }
      }
    }
  }
}

extension HostileSpecTests {
  @Test(arguments: [1, 2])
  func eachFileStartsInTheCLocaleWhateverAnotherSet(jobs: Int) async throws {
    let setter = try specFile("""
      it("sets the locale", function()
        assert.are.equal("C.utf8", os.setlocale("C.utf8"))
        assert.are.equal("C.utf8", os.setlocale(nil, "ctype"))
      end)
      """, named: "a_spec.lua")
    let folder = (setter as NSString).deletingLastPathComponent
    try Data("""
      it("finds the C locale", function()
        assert.are.equal("C", os.setlocale())
        assert.are.equal("C", os.setlocale(nil, "numeric"))
      end)
      """.utf8).write(to: URL(fileURLWithPath: folder + "/b_spec.lua"))
    var options = SpecOptions()
    options.jobs = jobs
    let runner = SpecRunner(options: options)
    // Each file after the setter, in a runtime it restored (one job) or in
    // one beside it.
    let (results, runtimes) = await runner.runCounting(files: [setter, folder + "/b_spec.lua", folder + "/b_spec.lua"])
    #expect(results.flatMap(\.results).map(\.status) == [.success, .success, .success], "\(results)")
    if jobs == 1 { #expect(runtimes.restored > 0) }
  }
}
