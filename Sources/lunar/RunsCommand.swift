import LuaKit
import Lunar
import LunarStore

/// `lunar runs`: lists the workflow runs recorded in the run store, newest
/// first; `lunar runs show RUN` shows one run step by step, as text or as a
/// Mermaid gantt chart. It reads the store `lunar run` records in and never
/// creates one.
enum RunsCommand {
  static let spec = CommandSpec(
    name: "runs",
    summary: "List recent workflow runs from the run store; 'runs show RUN' (an id or last) shows one run's steps; 'runs signal RUN NAME [JSON]' sends a run a signal.",
    operands: "[show RUN | signal RUN NAME [VALUE]]",
    options: [
      OptionSpec(
        name: "store", value: "URL", help: "read runs from URL (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "workflow", value: "NAME", help: "only runs of workflow NAME (for show: last means its last run)"),
      OptionSpec(name: "limit", value: "N", help: "list at most N runs (default \(defaultLimit))"),
      OptionSpec(
        name: "format", value: "text|gantt|chrome",
        help: "for show: text (default), a Mermaid gantt chart of the steps, or a Chrome trace of them for ui.perfetto.dev"),
    ],
    run: run
  )

  /// How many runs the list shows without `--limit`.
  static let defaultLimit = 20

  /// What the command line asks for.
  private enum Request {
    case list(limit: Int)
    case show(RunReference, format: Format)
  }

  /// How `runs show` writes a run.
  enum Format: String {
    case text, gantt, chrome
  }

  static func run(_ parsed: ParsedArguments) -> Int32 {
    if parsed.operands.first == "signal" { return RunsSignalCommand.run(parsed) }
    let request: Request
    let location: StoreLocation
    do {
      request = try readRequest(parsed)
      location = try StoreOption.location(parsed, command: "runs")
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    // Workflow names are bytes; the one asked for is matched by its UTF-8.
    let workflow = parsed.bytes("workflow")
    do {
      let store: any RunStore
      do {
        // Read only, so a store in a folder the user may not write is read.
        store = try location.openRunStore(createIfMissing: false, options: .init(readOnly: true))
      } catch where error.kind == .missing {
        // Reading never creates a store: there is nothing to read yet.
        if case .show = request {
          Console.error("lunar: no runs recorded yet in \(location)")
          return 1
        }
        print("no runs recorded yet in \(location)")
        return 0
      }
      switch request {
      case .list(let limit):
        let summaries = try store.runs(workflow: workflow, limit: limit)
        if summaries.isEmpty {
          let which = workflow.map { "of workflow '\(RunText.name($0))' " } ?? "recorded yet "
          print("no runs \(which)in \(store.location)")
        } else {
          print(RunTable.text(summaries), terminator: "")
        }
      case .show(let reference, let format):
        let run = try store.resolve(reference, workflow: workflow)
        if let workflow, run.workflow != workflow {
          Console.error(
            "lunar: run \(run.id) in \(store.location) is of workflow '\(RunText.name(run.workflow))', not '\(RunText.name(workflow))'"
          )
          return 1
        }
        let steps = try store.steps(of: run.id)
        let text =
          switch format {
          case .text: RunDetails.text(run, steps: steps)
          case .gantt: RunGantt.text(run, steps: steps)
          case .chrome: RunTimeline.text(run, steps: steps)
          }
        print(text, terminator: "")
      }
      return 0
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }

  /// The list or the run the operands and flags ask for.
  private static func readRequest(_ parsed: ParsedArguments) throws(UsageError) -> Request {
    switch parsed.operands.first {
    case nil:
      if parsed.has("format") {
        throw UsageError(message: "--format is for runs show, not for the list of runs", command: "runs")
      }
      var limit = defaultLimit
      if let text = parsed.value("limit") {
        guard let number = Int(text), number > 0 else {
          throw UsageError(message: "--limit needs a positive number of runs, got '\(text)'", command: "runs")
        }
        limit = number
      }
      return .list(limit: limit)
    case "show":
      guard parsed.operands.count == 2 else {
        let message =
          parsed.operands.count < 2
          ? "runs show needs a RUN: a run id or last" : "runs show takes one RUN, got \(parsed.operands.count - 1)"
        throw UsageError(message: message, command: "runs")
      }
      if parsed.has("limit") {
        throw UsageError(message: "--limit is for the list of runs, not for runs show", command: "runs")
      }
      let name = parsed.value("format") ?? "text"
      guard let format = Format(rawValue: name) else {
        throw UsageError(message: "--format is 'text', 'gantt' or 'chrome', got '\(name)'", command: "runs")
      }
      do {
        return .show(try RunReference(parsing: parsed.operands[1]), format: format)
      } catch {
        throw UsageError(message: error.message, command: "runs")
      }
    case let word?:
      throw UsageError(
        message: "unknown word '\(word)': 'lunar runs' lists runs, 'lunar runs show RUN' shows one", command: "runs")
    }
  }
}
