import Glibc
import LunarStore

/// `lunar runs wait RUN [--timeout S]`: polls the store until the run
/// finishes, prints its final status and exits 0 if it succeeded, 1 if it
/// failed or was interrupted (and 1 when the timeout passes first).
enum RunsWait {
  /// How long to wait between two reads of the store.
  static let pollInterval: Duration = .milliseconds(200)

  static func run(_ parsed: ParsedArguments) -> Int32 {
    let reference: RunReference
    var timeout: Double?
    let location: StoreLocation
    do throws(UsageError) {
      guard parsed.operands.count == 2 else {
        let message =
          parsed.operands.count < 2 ? "runs wait needs a RUN: a run id or last" : "runs wait takes one RUN, got \(parsed.operands.count - 1)"
        throw UsageError(message: message, command: "runs")
      }
      for flag in ["limit", "format"] where parsed.has(flag) {
        throw UsageError(message: "--\(flag) is not for runs wait", command: "runs")
      }
      if let text = parsed.value("timeout") {
        guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds < 366 * 86_400 else {
          throw UsageError(message: "--timeout needs a positive number of seconds under a year, got '\(text)'", command: "runs")
        }
        timeout = seconds
      }
      do {
        reference = try RunReference(parsing: parsed.operands[1])
      } catch {
        throw UsageError(message: error.message, command: "runs")
      }
      location = try StoreOption.location(parsed, command: "runs")
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    do {
      let store = try location.openRunStore(createIfMissing: false, options: .init(readOnly: true))
      let id = try store.resolve(reference, workflow: parsed.bytes("workflow")).id
      let deadline = timeout.map { ContinuousClock.now + .microseconds(Int64($0 * 1_000_000)) }
      while true {
        guard let run = try store.run(id) else {
          Console.error("lunar: run \(id) was removed from \(store.location) while waited for")
          return 1
        }
        if run.status.isFinished {
          print(run.status.rawValue)
          return run.status == .succeeded ? 0 : 1
        }
        if let deadline, ContinuousClock.now >= deadline {
          Console.error("lunar: run \(id) is still \(run.status.rawValue) after \(parsed.value("timeout") ?? "") seconds")
          return 1
        }
        sleep(pollInterval)
      }
    } catch where error.kind == .missing {
      Console.error("lunar: no runs recorded yet in \(location)")
      return 1
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }

  private static func sleep(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var left = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var rest = timespec()
    while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
  }
}
