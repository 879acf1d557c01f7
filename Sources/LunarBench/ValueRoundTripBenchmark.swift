import Foundation
import LuaKit

/// A 1 MB nested table copied Lua → Swift (`LuaValue`) → Lua, against a
/// Foundation JSON round trip (serialise and parse) of the same data.
enum ValueRoundTripBenchmark {
  static func run() throws {
    let state = try LuaState()
    try state.load(
      """
      local t = {}
      for i = 1, 6000 do
        t[i] = { id = i, name = 'launch ' .. i, tags = {'crewed', 'orbital', i % 7},
                 pad = { name = 'LC-39A', location = { country = 'US', lat = 28.6 } }, score = i / 3 }
      end
      return t
      """, name: "=data")
    try state.call(arguments: 0, results: 1)
    let value = try state.value(at: -1)
    state.pop()

    let json = try JSONSerialization.data(withJSONObject: foundationObject(value))
    let megabytes = Double(json.count) / 1_000_000

    let lunar = try Harness.nanoseconds(iterations: 5) { n in
      for _ in 0..<n {
        try state.push(value)
        _ = try state.value(at: -1)
        state.pop()
      }
    }
    let object = foundationObject(value)
    let foundation = try Harness.nanoseconds(iterations: 5) { n in
      for _ in 0..<n {
        let data = try JSONSerialization.data(withJSONObject: object)
        _ = try JSONSerialization.jsonObject(with: data)
      }
    }
    Harness.report(
      String(format: "LuaValue round trip (%.1f MB as JSON)", megabytes), subject: lunar / 1e6, baseline: foundation / 1e6,
      baselineName: "JSON:", unit: "ms", goal: "≤ 0.33× (3× faster)")
  }

  /// The same data as Foundation property-list objects.
  static func foundationObject(_ value: LuaValue) -> Any {
    switch value {
    case .nil: return NSNull()
    case .boolean(let b): return b
    case .integer(let i): return i
    case .number(let d): return d
    case .string(let s): return s.lossyString
    case .table(let t):
      if t.fields.isEmpty { return t.array.map(foundationObject) }
      var dictionary: [String: Any] = [:]
      for (key, element) in t.entries { dictionary[key.description] = foundationObject(element) }
      return dictionary
    }
  }
}
