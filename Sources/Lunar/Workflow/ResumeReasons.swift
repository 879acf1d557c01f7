import LuaKit
import LunarStore

/// Why each selected step of a resumed run runs again, known before the run
/// starts: forced, not finished in the resumed run, its code changed, or a
/// step it needs reruns. A step given no reason here is reused unless its
/// input turns out to have changed (known only when it is about to start).
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
        if forced.contains(position) {
          reasons[position] = "forced (--force)"
        } else if let earlier = previous[step.name] {
          switch earlier.status {
          case .failed: reasons[position] = "failed in run \(resumed)"
          case .skipped: reasons[position] = "skipped in run \(resumed)"
          case .succeeded, .reused:
            if codes.indices.contains(position), earlier.code != codes[position] {
              reasons[position] = earlier.code == nil ? "code not recorded in run \(resumed)" : "code changed"
            }
          }
        } else {
          reasons[position] = "did not finish in run \(resumed)"
        }
        if reasons[position] == nil,
          let need = step.needs.first(where: { plan.selected[$0] && reasons[$0] != nil })
        {
          reasons[position] = "needs \(steps[need].name.lossyString)"
        }
      }
    }
  }
}
