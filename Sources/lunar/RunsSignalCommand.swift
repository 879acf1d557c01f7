import LuaKit
import Lunar
import LunarStore

/// `lunar runs signal RUN NAME [VALUE]`: records signal NAME, with VALUE (a
/// JSON text; `true` if none), for a run in the run store. A step of the run
/// that waits for it (`workflow.wait`) outputs the value; a signal that comes
/// before its wait starts is kept and seen when it does.
enum RunsSignalCommand {
  /// Runs the subcommand; `parsed.operands` starts with `signal`.
  static func run(_ parsed: ParsedArguments) -> Int32 {
    let reference: RunReference
    let name: LuaString
    let value: LuaValue
    let location: StoreLocation
    do {
      (reference, name, value) = try readRequest(parsed)
      location = try StoreOption.location(parsed, command: "runs")
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    do {
      let store: any RunStore
      do {
        store = try location.openRunStore(createIfMissing: false)
      } catch where error.kind == .missing {
        Console.error("lunar: no runs recorded yet in \(location)")
        return 1
      }
      guard let waits = store as? any WaitStore else {
        Console.error("lunar: the store \(store.location) keeps no signals")
        return 1
      }
      let run = try store.resolve(reference, workflow: parsed.bytes("workflow"))
      try waits.sendSignal(name, value: value, to: run.id, at: .now)
      print("signal '\(RunText.name(name))' recorded for run \(run.id)")
      return 0
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }

  /// The run, the signal's name (bytes) and its value the operands give.
  private static func readRequest(_ parsed: ParsedArguments) throws(UsageError) -> (RunReference, LuaString, LuaValue) {
    let count = parsed.operands.count
    guard count == 3 || count == 4 else {
      let message =
        count < 3 ? "runs signal needs a RUN (a run id or last) and a signal NAME" : "runs signal takes RUN NAME [VALUE], got \(count - 1) words"
      throw UsageError(message: message, command: "runs")
    }
    for flag in ["limit", "format"] where parsed.has(flag) {
      throw UsageError(message: "--\(flag) is not for runs signal", command: "runs")
    }
    let reference: RunReference
    do {
      reference = try RunReference(parsing: parsed.operands[1])
    } catch {
      throw UsageError(message: error.message, command: "runs")
    }
    let name = parsed.operandBytes[2]
    guard !name.bytes.isEmpty else { throw UsageError(message: "runs signal needs a signal NAME, got an empty word", command: "runs") }
    guard count == 4 else { return (reference, name, .boolean(true)) }
    do {
      return (reference, name, try JSON.decode(parsed.operandBytes[3].bytes))
    } catch {
      throw UsageError(message: "runs signal: VALUE is not JSON: \(error) (a text is quoted: '\"yes\"')", command: "runs")
    }
  }
}
