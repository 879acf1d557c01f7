import Foundation

/// Debian's luacheck (`lua-check`, installed by `scripts/bootstrap`): the
/// linter a user runs, given the files `lunar types` writes.
public enum Luacheck {
  /// `luacheck` itself is missing.
  public struct Missing: Error, CustomStringConvertible {
    public var description: String { "luacheck is not installed: run scripts/bootstrap" }
  }

  /// What one run of luacheck said.
  public struct Report {
    /// 0 for no warnings, 1 for warnings, 2 and more for errors.
    public let status: Int32
    /// Its report, one `file:line:column: message` line per warning.
    public let output: String
  }

  /// Runs `luacheck --formatter plain FILES...` in `folder`, where it reads
  /// the folder's `.luacheckrc`; kills it after `timeout` seconds.
  public static func check(_ files: [String], in folder: URL, timeout: TimeInterval = 60) async throws -> Report {
    guard let luacheck = ["/usr/bin/luacheck", "/usr/local/bin/luacheck"].first(where: FileManager.default.isExecutableFile)
    else { throw Missing() }
    let output = try TemporaryFile()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: luacheck)
    process.arguments = ["--formatter", "plain"] + files
    process.currentDirectoryURL = folder
    process.standardOutput = output.handle
    process.standardError = output.handle
    try process.run()
    guard await ChildProcess.wait(for: process, timeout: timeout) else {
      return Report(status: -1, output: "luacheck did not finish in \(timeout) seconds")
    }
    return Report(status: process.terminationStatus, output: try output.contents())
  }
}
