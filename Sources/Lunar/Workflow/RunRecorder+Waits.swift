import LuaKit
import LunarStore

extension RunRecorder {
  /// The deadline of sleep step `name` (seconds since the epoch): the one
  /// the resumed run recorded for the step with the same fingerprint, else
  /// `proposed`. Recorded for this run before the wait starts.
  /// - Throws: `StoreError` if the store cannot record it, or for a
  ///   deadline that is not a time (beyond ±285,000 years).
  func waitDeadline(of name: LuaString, fingerprint: Fingerprint?, proposed: Double) throws(StoreError) -> Double {
    guard let waits = store as? any WaitStore else { return proposed }
    let milliseconds = (proposed * 1000).rounded()
    guard milliseconds.magnitude < 9e15 else {
      throw StoreError(.database, "step \(name.quoted): the deadline \(proposed) is not a time Lunar can record")
    }
    var deadline = Int64(milliseconds)
    if let resumes, let earlier = try waits.stepWaits(of: resumes).first(where: { $0.name == name }),
      earlier.fingerprint == fingerprint
    {
      deadline = earlier.deadlineMilliseconds
    }
    try waits.recordStepWait(StepWait(name: name, fingerprint: fingerprint, deadlineMilliseconds: deadline), of: run)
    return Double(deadline) / 1000
  }

  /// The value of signal `name` sent to this run, or to the run it resumes
  /// (sent while it waited, before it was interrupted); nil if none was.
  func signal(_ name: LuaString) throws(StoreError) -> LuaValue?? {
    guard let waits = store as? any WaitStore else { return nil }
    if let value = try waits.signal(name, of: run) { return value }
    guard let resumes else { return nil }
    return try waits.signal(name, of: resumes)
  }
}
