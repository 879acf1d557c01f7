import LunarStore

/// `lunar runs cancel RUN`: asks the process that runs RUN, on any host
/// sharing the store, to cancel it; it sees the request at its next
/// heartbeat (within a second), cancels its steps as a signal would and
/// records the run as cancelled by request.
enum RunsCancelCommand {
  static func run(_ parsed: ParsedArguments) -> Int32 {
    let location: StoreLocation
    let reference: RunReference
    do {
      guard parsed.operands.count == 2 else {
        let message =
          parsed.operands.count < 2
          ? "runs cancel needs a RUN: a run id or last" : "runs cancel takes one RUN, got \(parsed.operands.count - 1)"
        throw UsageError(message: message, command: "runs")
      }
      do {
        reference = try RunReference(parsing: parsed.operands[1])
      } catch {
        throw UsageError(message: error.message, command: "runs")
      }
      location = try StoreOption.location(parsed, command: "runs")
    } catch let error as UsageError {
      return LunarCommandLine.usageFailure(error)
    } catch {
      Console.error("lunar: \(error)")
      return 2
    }
    do {
      let store: any RunStore
      do {
        store = try location.openRunStore(createIfMissing: false)
      } catch where error.kind == .missing {
        Console.error("lunar: no runs recorded yet in \(location)")
        return 1
      }
      let run = try store.resolve(reference, workflow: parsed.bytes("workflow"))
      switch try store.requestCancel(run.id, by: "request", at: .now) {
      case .requested:
        print("run \(run.id): cancel requested; process \(run.pid) on \(RunText.printable(run.host)) stops it")
      case .cancelledNow:
        print("run \(run.id): its process was gone (its lease expired); recorded as cancelled")
      }
      return 0
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }
}
