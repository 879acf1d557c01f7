import LuaKit
import LunarStore

/// What `lunar runs show RUN` prints: the run's header (workflow, file,
/// arguments, status, times, the run it resumed), then each recorded step
/// with its status, attempts and duration, and under it its error, or its
/// output if asked (`--outputs`). A fan-out's children (`regions[1]`…,
/// recorded at their step's position) are listed under it, in item order.
enum RunDetails {
  /// The text for `run` and its recorded `steps` (with their outputs if
  /// `outputs`), each line ending in a newline; then, unless `filtered`
  /// (the steps are a selection), the planned steps it did not record.
  static func text(_ run: RunRecord, steps recorded: [StepRecord], outputs: Bool = true, filtered: Bool = false) -> String {
    let steps = StepRecord.inItemOrder(recorded)
    var header: [(String, String)] = [
      ("run", run.id.description),
      ("workflow", RunText.name(run.workflow)),
      ("file", RunText.printable(run.file)),
      ("arguments", run.arguments.isEmpty ? "(none)" : run.arguments.map(shellWord).joined(separator: " ")),
      ("status", status(of: run)),
      ("started", RunText.localTime(run.startedAt)),
      ("duration", RunText.duration(of: run)),
    ]
    if let earlier = run.resumedFrom { header.append(("resumed from", "run \(earlier)")) }
    // A worker's reason for failing a run it never ran (a changed file, a
    // run abandoned after its processes kept dying).
    if run.status == .failed, let why = run.stoppedBy { header.append(("why", RunText.printable(why))) }
    if run.ownerToken.rawValue > 1 { header.append(("owner", "token \(run.ownerToken.rawValue), process \(run.pid) on \(RunText.printable(run.host))")) }
    let labelWidth = header.map(\.0.count).max() ?? 0
    var text = header.map { label, value in label.padded(to: labelWidth) + "  " + value + "\n" }.joined()
    text += "\n"
    // The steps the run was to run and did not record: running at its
    // owner's last heartbeat, or never started.
    let recorded = Set(steps.map(\.name))
    let running = Set(run.running)
    let unrecorded = filtered ? [] : run.plan.filter { !recorded.contains($0) }
    guard !steps.isEmpty || !unrecorded.isEmpty else { return text + "no steps recorded\n" }

    // A child is indented under its step (a declared step may be named `x[1]` too).
    let parents = Set(steps.filter { StepRecord.childIndex(of: $0.name) == nil }.map(\.position))
    let names = steps.map {
      (StepRecord.childIndex(of: $0.name) != nil && parents.contains($0.position) ? "  " : "") + RunText.name($0.name)
    }
      + unrecorded.map { RunText.name($0) }
    let nameWidth = names.reduce(4) { max($0, $1.count) }
    func row(_ name: String, _ status: String, _ attempts: String, _ duration: String) -> String {
      name.padded(to: nameWidth) + "  " + status.padded(to: 9) + "  " + attempts.leftPadded(to: 8) + "  "
        + duration.leftPadded(to: 9)
    }
    text += row("step", "status", "attempts", "duration") + "\n"
    for (name, step) in zip(names, steps) {
      text += row(name, step.status.rawValue, String(step.attempts), RunText.duration(from: step.startedAt, to: step.finishedAt))
        + "\n"
      if let error = step.error {
        // A traceback's lines stay under the step, indented as its first.
        let lines = error.lossyString.split(separator: "\n", omittingEmptySubsequences: false)
        text += "    error: " + lines.joined(separator: "\n           ") + "\n"
      } else if outputs, let output = step.output {
        text += ValueText.output(output, label: "output: ", indent: 4) + "\n"
      }
    }
    // As `status(of:)` says: a run whose process on this host is gone is
    // not running, whatever its lease says.
    let stillRunning =
      run.status == .running && !run.leaseExpired() && !(run.leaseExpiresAt != nil && RunText.processIsGone(run))
    for (name, step) in zip(names.dropFirst(steps.count), unrecorded) {
      let status = running.contains(step) ? (stillRunning ? "running" : "stopped") : "not started"
      text += row(name, status, "-", "-") + "\n"
    }
    return text
  }

  /// The run's status; for one recorded as running, which process runs it
  /// or that it is gone.
  private static func status(of run: RunRecord) -> String {
    guard run.status == .running else { return RunText.status(of: run) }
    if run.leaseExpiresAt != nil && RunText.processIsGone(run) {
      return "interrupted (process \(run.pid) ended without recording the run's end)"
    }
    if run.leaseExpired(), let expiry = run.leaseExpiresAt {
      return "interrupted (process \(run.pid) on \(RunText.printable(run.host)) stopped renewing its lease; it expired at \(RunText.localTime(expiry)))"
    }
    if RunText.processIsGone(run) {
      return "interrupted? (process \(run.pid) ended without recording the run's end)"
    }
    return "running (process \(run.pid) on \(RunText.printable(run.host)))"
  }

  /// `word` as a shell would need it typed: quoted when it is empty or holds
  /// anything but plain characters.
  private static func shellWord(_ word: String) -> String {
    let plain = word.unicodeScalars.allSatisfy { scalar in
      scalar.value >= 0xA0 || plainCharacters.contains(scalar)
    }
    if plain && !word.isEmpty { return word }
    return "'" + RunText.printable(word).split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
      + "'"
  }

  private static let plainCharacters = Set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,".unicodeScalars)
}

extension String {
  /// The string followed by spaces up to `width` characters.
  fileprivate func padded(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }

  /// The string after spaces up to `width` characters.
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: " ", count: width - count) + self
  }
}
