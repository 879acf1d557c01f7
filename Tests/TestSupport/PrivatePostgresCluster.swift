import Foundation

/// A PostgreSQL cluster of one test's own, made by `scripts/pg-cluster`: a
/// test that restarts its server must not restart the one other suites
/// share (`LUNAR_TEST_POSTGRES`). `with` stops and removes it afterwards,
/// whatever the test does.
public final class PrivatePostgresCluster: Sendable {
  /// True when PostgreSQL's server programs are installed (`scripts/bootstrap`
  /// installs them); without them no cluster can be made.
  public static var serverInstalled: Bool {
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    return versions.contains { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/pg_ctl") }
  }

  /// The cluster's URL over its Unix socket.
  public let url: String
  /// Where the cluster lives (removed by `stop`).
  private let folder: String

  private init(url: String, folder: String) {
    self.url = url
    self.folder = folder
  }

  /// Starts a cluster, runs `body` with it, then stops it and removes it,
  /// whether `body` returns or throws.
  public static func with<T>(_ body: (PrivatePostgresCluster) async throws -> T) async throws -> T {
    // Not under a TemporaryFolder: the script hands the folder to the
    // postgres user, who must be able to reach it.
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-pg-\(UUID().uuidString)").path
    let started: String
    do {
      started = try await script("start", folder)
    } catch {
      _ = try? await script("stop", folder)
      throw error
    }
    guard let url = exported("LUNAR_PG_URL", in: started) else {
      _ = try? await script("stop", folder)
      throw Failure(message: "scripts/pg-cluster start printed no LUNAR_PG_URL: \(started)")
    }
    let cluster = PrivatePostgresCluster(url: url, folder: folder)
    do {
      let result = try await body(cluster)
      try await cluster.stop()
      return result
    } catch {
      try? await cluster.stop()
      throw error
    }
  }

  /// Stops the server at once, as a crash would, and starts it again on
  /// the same port: its clients' connections are gone, its URL still holds.
  public func restart() async throws {
    _ = try await Self.script("restart", folder)
  }

  /// Stops the server at once and removes the cluster (`with` does it at
  /// the end, and doing it twice is harmless).
  public func stop() async throws {
    _ = try await Self.script("stop", folder)
  }

  /// The package's `scripts/pg-cluster`.
  private static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("scripts/pg-cluster").path

  /// Runs `scripts/pg-cluster COMMAND FOLDER` and returns what it printed;
  /// throws with its messages if it fails (or takes over two minutes).
  ///
  /// Spawned directly, with no descriptor of ours but its output files:
  /// the server it starts outlives it and would keep whatever it inherited
  /// open, such as the socket by which `Process` learns that a child ended
  /// (the script would never seem to end) or another test's pipe to a
  /// child's standard input (that child would never read its end).
  private static func script(_ command: String, _ folder: String) async throws -> String {
    let (output, errors) = (try TemporaryFile(), try TemporaryFile())
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output.url.path, O_WRONLY | O_APPEND, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errors.url.path, O_WRONLY | O_APPEND, 0)
    guard let addCloseFrom else { throw Failure(message: "posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later has it)") }
    _ = addCloseFrom(&actions, 3)
    let words: [String] = [scriptPath, command, folder]
    let arguments = words.map { strdup($0) }
    defer { arguments.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, scriptPath, &actions, nil, arguments + [nil], environ)
    guard spawned == 0 else {
      throw Failure(message: "cannot run \(scriptPath): \(String(cString: strerror(spawned)))")
    }
    let deadline = Date().addingTimeInterval(120)
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
      guard Date() < deadline else {
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        throw Failure(message: "scripts/pg-cluster \(command) did not finish in time")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    // Exited normally (no signal) with status 0.
    guard status & 0x7F == 0 && (status >> 8) & 0xFF == 0 else {
      throw Failure(message: "scripts/pg-cluster \(command) failed: \(try errors.contents())")
    }
    return try output.contents()
  }

  /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later),
  /// which Swift's Glibc module leaves out with the other GNU extensions.
  private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
    // RTLD_DEFAULT is the null handle on glibc.
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
  }()

  /// The value of `export NAME='VALUE'` in `lines`.
  private static func exported(_ name: String, in lines: String) -> String? {
    let prefix = "export \(name)='"
    return lines.split(separator: "\n").first { $0.hasPrefix(prefix) && $0.hasSuffix("'") }
      .map { String($0.dropFirst(prefix.count).dropLast()) }
  }

  /// A cluster that could not be started, restarted or stopped.
  public struct Failure: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
  }
}
