import Foundation

/// Child processes the benchmarks start with their standard output
/// discarded, so a benchmark's own lines stay readable.
enum QuietChild {
  /// Starts `path` with `arguments`; its process id, or 0 if it could not start.
  static func spawn(_ path: String, _ arguments: [String]) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return 0 }
    return pid
  }
}
