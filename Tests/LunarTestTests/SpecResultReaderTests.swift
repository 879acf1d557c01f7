import LuaKit
import Testing

@testable import LunarTest

/// The field-by-field reader of reported results gives what decoding them
/// gives, and leaves the rest to the decoder.
@Suite struct SpecResultReaderTests {
  static func read(_ source: String) throws -> (fast: SpecResult?, decoded: SpecResult?) {
    let state = try LuaState()
    try state.load("return " + source, name: "=result")
    try state.call(arguments: 0, results: 1)
    let fast = SpecResultReader.read(at: -1, of: state)
    // As the plugin decodes: bytes that are not UTF-8 escaped first.
    let decoded = try? LuaValueDecoder().decode(SpecResult.self, from: SpecText.value(state.value(at: -1, root: "result")))
    return (fast, decoded)
  }

  @Test func plainResultsReadAsDecoded() throws {
    for source in [
      #"{ name = "a passes", status = "success", duration = 0.25, tags = {} }"#,
      #"{ name = "b fails", status = "failure", message = "x_spec.lua:3: bad", position = "x_spec.lua:3", traceback = "\nstack traceback:", duration = 1, tags = { "unit", "fast" } }"#,
      #"{ name = "ünïcode ✓", status = "pending", message = "later", duration = 0, tags = { "tag" }, extra = true }"#,
      #"{ name = "b\255in", status = "failure", message = "\254", duration = 0, tags = { "t\253" } }"#,
    ] {
      let (fast, decoded) = try Self.read(source)
      #expect(fast != nil)
      #expect(fast == decoded)
    }
  }

  @Test func anythingElseIsLeftToTheDecoder() throws {
    for source in [
      #"{ name = "a", status = "unheard of", duration = 0, tags = {} }"#,
      #"{ name = "a", status = "success", duration = 0, tags = { "a", x = 1 } }"#,
      #"{ name = "a", status = "success", duration = 0, tags = {}, message = 3 }"#,
      #"{ name = "a", status = "success", duration = 0 }"#,
      #"{ name = "a", status = "success", duration = 0, tags = {}, element = { descriptor = "it" } }"#,
    ] {
      #expect(try Self.read(source).fast == nil)
    }
  }
}
