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
        let earlier = previous[step.name]
        let code = codes.indices.contains(position) ? codes[position] : nil
        if forced.contains(position) {
          reasons[position] = "forced (--force)"
        } else if let earlier, earlier.code != nil || earlier.status == .succeeded || earlier.status == .reused,
          earlier.code != code
        {
          // A skipped step's record has no code; a finished one's may come
          // from a Lunar that did not record it.
          reasons[position] = earlier.code == nil ? "code not recorded in run \(resumed)" : "code changed"
        } else if let need = step.needs.first(where: { plan.selected[$0] && reasons[$0] != nil }) {
          reasons[position] = "needs \(steps[need].name.lossyString)"
        } else if let earlier {
          switch earlier.status {
          case .failed: reasons[position] = "failed in run \(resumed)"
          case .skipped: reasons[position] = "skipped in run \(resumed)"
          case .succeeded, .reused: break
          }
        } else {
          reasons[position] = "did not finish in run \(resumed)"
        }
      }
    }
  }
}
