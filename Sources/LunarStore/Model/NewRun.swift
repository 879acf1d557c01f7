import Glibc
import LuaKit

/// What the store records when a run begins.
public struct NewRun: Sendable {
  /// The workflow's name, as bytes (names from Lua are never compared as text).
  public var workflow: LuaString
  /// The script file, as given on the command line.
  public var file: String
  /// The script's arguments.
  public var arguments: [String]
  /// The run whose outputs this one reuses (`--resume`, `--from`).
  public var resumedFrom: RunID?
  /// When it began.
  public var startedAt: StoreTimestamp
  /// The machine and process running it, so `lunar runs` can tell a live
  /// run from one whose process died.
  public var host: String
  /// The process running it.
  public var pid: Int32
  /// How long the process holds the run (token 1) without a heartbeat.
  public var lease: Duration
  /// The steps it is to run, in declaration order, and what each needs, so a run
  /// that stops early still shows the ones it never started.
  public var plan: RunPlan = []

  /// A run of `workflow` from `file`, begun now by this process.
  public init(
    workflow: LuaString, file: String, arguments: [String] = [], resumedFrom: RunID? = nil,
    startedAt: StoreTimestamp = .now, host: String = NewRun.currentHost, pid: Int32 = getpid(),
    lease: Duration = RunLease.defaultDuration
  ) {
    self.lease = lease
    self.workflow = workflow
    self.file = file
    self.arguments = arguments
    self.resumedFrom = resumedFrom
    self.startedAt = startedAt
    self.host = host
    self.pid = pid
  }

  /// This machine's host name.
  public static var currentHost: String {
    var name = [CChar](repeating: 0, count: 256)
    guard gethostname(&name, name.count - 1) == 0 else { return "" }
    return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
