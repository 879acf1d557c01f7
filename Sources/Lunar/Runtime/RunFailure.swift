import LuaKit

/// Why a run did not succeed; the CLI maps each to an exit status.
public enum RunFailure: Error, Sendable {
  /// A Lua error (syntax, runtime, memory) in the main chunk.
  case lua(LuaError)
  /// Ctrl-C or a request stopped the run (exit status 130).
  case interrupted(String)
  /// `--timeout` stopped the run.
  case timedOut(String)
  /// Everything waited and nothing could wake it.
  case deadlock(String)
  /// Tasks failed and nobody awaited them.
  case unobservedErrors([UnobservedError])
  /// The run's options do not fit what the script turned out to be (exit
  /// status 2): a workflow flag for a file that returns no workflow, or a
  /// run flag given after the file that returns one.
  case usage(String)
}

/// A failed task whose error nobody observed, as reported at the end of a run.
public struct UnobservedError: Sendable, Equatable, CustomStringConvertible {
  /// The task's label (`task 3`).
  public let label: String
  /// Where it was spawned (`f.lua:3`), or empty if not from a line of the
  /// user's code.
  public let origin: String
  /// Its error message.
  public let message: String
  /// Its traceback.
  public let traceback: String?

  init(_ task: LuaTask) {
    label = task.label
    origin = task.origin
    message = task.errorMessage ?? "(unknown error)"
    traceback = task.traceback
  }

  /// The failures of a machine that nobody settled (each `machine 'm': ...`).
  init(machine: LuaString, messages: [String]) {
    let label = "machine '\(machine)'"
    self.label = label
    origin = ""
    message = messages.map { $0.replacingPrefix(label + ": ", with: "") }.joined(separator: "\n")
    traceback = nil
  }

  public var description: String {
    let spawned = origin.isEmpty ? "" : " (spawned at \(origin))"
    return "unobserved error in \(label)\(spawned): \(message)" + (traceback.map { "\n" + $0 } ?? "")
  }
}
