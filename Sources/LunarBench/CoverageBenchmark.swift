import Foundation

/// `lunar test --coverage` against `lunar test` on the same suite: 200 spec
/// files of 20 tests, each test calling a module under test (a loop and
/// branches), so the line hook counts the module's lines as well as looking
/// up those of the specs and of busted.
enum CoverageBenchmark {
  static let subject = """
    local M = {}

    function M.area(shape)
      if shape.kind == 'square' then
        return shape.side * shape.side
      elseif shape.kind == 'circle' then
        return 3 * shape.r * shape.r
      end
      return 0
    end

    function M.total(shapes)
      local sum = 0
      for _, shape in ipairs(shapes) do
        sum = sum + M.area(shape)
      end
      return sum
    end

    return M

    """

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-coverage-\(getpid())")
    try FileManager.default.createDirectory(at: folder.appendingPathComponent("src"), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(subject.utf8).write(to: folder.appendingPathComponent("src/shapes.lua"))
    for file in 1...200 {
      var source = "package.path = './src/?.lua;' .. package.path\nlocal shapes = require 'shapes'\n"
      source += "describe('shapes \(file)', function()\n"
      for test in 1...20 {
        source += """
            it('case \(test)', function()
              local list = {}
              for i = 1, 20 do list[i] = i % 2 == 0 and { kind = 'square', side = i } or { kind = 'circle', r = \(test) } end
              assert.is_true(shapes.total(list) > 0)
            end)

          """
      }
      source += "end)\n"
      try Data(source.utf8).write(to: folder.appendingPathComponent("s\(file)_spec.lua"))
    }
    let times = try Harness.interleaved(iterations: 1, rounds: 3, [
      { _ in StartupBenchmark.spawn(lunar, ["test", "--jobs", "1", "--coverage", "."], in: folder.path) },
      { _ in StartupBenchmark.spawn(lunar, ["test", "--jobs", "1", "."], in: folder.path) },
    ]).map { $0 / 1e6 }
    Harness.report(
      "lunar test 200×20 specs, --coverage (--jobs 1)", subject: times[0], baseline: times[1], baselineName: "without:",
      unit: "ms", goal: "≤ 2×")
    try tightLoop(lunar: lunar, in: folder)
  }

  /// The worst case: one test whose module under test spends its time in
  /// a two-line loop, so nearly every instruction starts a new line.
  static func tightLoop(lunar: String, in folder: URL) throws {
    let loop = folder.appendingPathComponent("loop")
    try FileManager.default.createDirectory(at: loop, withIntermediateDirectories: true)
    try Data("return function(n)\n  local x = 0\n  for i = 1, n do\n    x = x + i\n  end\n  return x\nend\n".utf8)
      .write(to: loop.appendingPathComponent("sum.lua"))
    try Data("local sum = dofile('sum.lua')\nit('sums', function() assert.is_true(sum(1e7) > 0) end)\n".utf8)
      .write(to: loop.appendingPathComponent("loop_spec.lua"))
    let times = try Harness.interleaved(iterations: 1, rounds: 3, [
      { _ in StartupBenchmark.spawn(lunar, ["test", "--coverage", "."], in: loop.path) },
      { _ in StartupBenchmark.spawn(lunar, ["test", "."], in: loop.path) },
    ]).map { $0 / 1e6 }
    Harness.report(
      "lunar test --coverage, a 10⁷-turn loop", subject: times[0], baseline: times[1], baselineName: "without:", unit: "ms",
      goal: "report")
  }
}
