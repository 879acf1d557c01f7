import LuaKit
import LunarStore

/// Why each selected step of a resumed run runs again, known before the run
/// starts, the first that holds of: forced, its code changed, a step it
/// needs reruns, it did not succeed in the resumed run. A step given no
/// reason here is reused unless its input turns out to have changed (known
/// only when it is about to start).
struct ResumeReasons {
  /// The reason by position; nil for a step expected to be reused.
  private(set) var reasons: [String?]

  /// The reasons for `steps` selected by `plan`, against the records of
  /// run `resumed` (`previous`, by name); `codes` are this run's code
  /// fingerprints, `forced` the positions `--force` names.
  init(
    steps: [WorkflowStep], plan: WorkflowPlan, previous: [LuaString: StepRecord], codes: [Fingerprint?],
    forced: Set<Int>, resumed: RunID
  ) {
    reasons = Array(repeating: nil, count: steps.count)
    // Groups are in dependency order: a step's needs are decided first.
    for group in plan.groups {
      for position in group {
        let step = steps[position]
        let rerunNeed = step.needs.first { plan.selected[$0] && reasons[$0] != nil }
        reasons[position] = Self.reason(
          earlier: previous[step.name], code: codes.indices.contains(position) ? codes[position] : nil,
          forced: forced.contains(position), rerunNeed: rerunNeed.map { steps[$0].name }, resumed: resumed)
      }
    }
  }

  /// Why one step reruns (nil: reused unless its input changed), given its
  /// record in run `resumed` (`earlier`), its code now, whether `--force`
  /// names it, and the first step it needs that reruns. A fan-out's
  /// children, known only once their step runs, are judged by it too.
  static func reason(
    earlier: StepRecord?, code: Fingerprint?, forced: Bool, rerunNeed: LuaString?, resumed: RunID
  ) -> String? {
    if forced { return "forced (--force)" }
    if let earlier, earlier.code != nil || earlier.status == .succeeded || earlier.status == .reused,
      earlier.code != code
    {
      // A skipped step's record has no code; a finished one's may come
      // from a Lunar that did not record it.
      return earlier.code == nil ? "code not recorded in run \(resumed)" : "code changed"
    }
    if let rerunNeed { return "needs \(rerunNeed.lossyString)" }
    guard let earlier else { return "did not finish in run \(resumed)" }
    switch earlier.status {
    case .failed: return "failed in run \(resumed)"
    case .skipped: return "skipped in run \(resumed)"
    case .succeeded, .reused: return nil
    }
  }
}
