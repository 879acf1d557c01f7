/// Where a step's output went as it ran: the stream a stored log chunk was
/// written to, kept so a reader can tell them apart.
public enum StepLogStream: Int, Sendable {
  /// Standard output (`print`, `io.write`, `io.stdout:write`).
  case standardOutput = 1
  /// Standard error (`io.stderr:write`, `ctx.log`, a machine's `log`).
  case standardError = 2
}
