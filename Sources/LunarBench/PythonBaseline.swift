import Foundation

/// Baselines from PyPI measured by a Python script run with the benchmarks'
/// own virtual environment, whose Python `scripts/bench` names in
/// `LUNAR_BENCH_PYTHON`. A script prints its figures as lines of words and
/// prints nothing when its package is missing.
enum PythonBaseline {
  /// Runs `script`, saved in `folder` as `name`, with `arguments`, and
  /// returns its output's lines split into words; nil when no Python is at
  /// hand. The script's standard error is discarded.
  static func run(_ script: String, named name: String, in folder: URL, arguments: [String] = []) throws -> [[Substring]]? {
    guard let python = ProcessInfo.processInfo.environment["LUNAR_BENCH_PYTHON"] else { return nil }
    let file = folder.appendingPathComponent(name)
    try Data(script.utf8).write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [file.path] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return output.split(separator: "\n").map { $0.split(separator: " ") }
  }

  /// The numbers after `word` on the first of `lines` that starts with it,
  /// or nil if no line does or one of them is not a number.
  static func numbers(after word: String, in lines: [[Substring]]) -> [Double]? {
    guard let line = lines.first(where: { $0.first == Substring(word) }) else { return nil }
    let numbers = line.dropFirst().compactMap { Double($0) }
    return numbers.count == line.count - 1 ? numbers : nil
  }
}
