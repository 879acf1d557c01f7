import Foundation
import TestSupport

/// Runs `lunar` as someone who may read a folder but not write in it, as a
/// user reading a store another user keeps: as root (CI), as the user
/// `nobody` through runuser, with the folder and its files readable by all;
/// as anyone else, as that user, with the folder's write permission taken
/// away while it runs.
enum UnwritableFolderReader {
  /// `lunar ARGUMENTS`, unable to create a file in `folder`.
  static func run(_ arguments: [String], reading folder: URL) async throws -> ProgramRun.Outcome {
    let path = folder.path
    if geteuid() == 0 {
      chmod(path, 0o755)
      for name in try FileManager.default.contentsOfDirectory(atPath: path) { chmod(path + "/" + name, 0o644) }
      // The build may sit in a folder only root may enter (a checkout in
      // `mktemp -d`): nobody runs a link to the binary from a folder of its own.
      let place = try TemporaryFolder()
      chmod(place.url.path, 0o755)
      let binary = place.url.appendingPathComponent("lunar").path
      if link(LunarProcess.binary, binary) != 0 { try FileManager.default.copyItem(atPath: LunarProcess.binary, toPath: binary) }
      chmod(binary, 0o755)
      return try await ProgramRun.run(
        "/usr/sbin/runuser", ["-u", "nobody", "--", binary] + arguments, environment: ["LUNAR_STORE": ""],
        in: URL(fileURLWithPath: "/"))
    }
    chmod(path, 0o555)
    defer { chmod(path, 0o755) }
    return try await ProgramRun.run(LunarProcess.binary, arguments, environment: ["LUNAR_STORE": ""], in: URL(fileURLWithPath: "/"))
  }
}
