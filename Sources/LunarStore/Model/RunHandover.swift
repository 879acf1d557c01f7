/// A run a worker claimed (or took over) and hands to the process it starts
/// for it: that process adopts the run with `RunStore.adopt` and goes on
/// with the run's committed steps, under a token of its own.
public struct RunHandover: Sendable, Equatable, CustomStringConvertible {
  /// The run handed over.
  public var run: RunID
  /// The worker's fencing token for it; the adopting process's is one more.
  public var token: ClaimToken

  /// The handover of `run`, held with `token`.
  public init(run: RunID, token: ClaimToken) {
    self.run = run
    self.token = token
  }

  /// `RUN:TOKEN`, as `lunar run --adopt` takes it.
  public var description: String { "\(run.rawValue):\(token.rawValue)" }

  /// The handover `RUN:TOKEN` names (positive numbers), or nil.
  public init?(_ text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let run = Int64(parts[0]), let token = Int64(parts[1]), run > 0, token > 0 else { return nil }
    self.init(run: RunID(run), token: ClaimToken(token))
  }
}
