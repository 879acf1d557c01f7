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
    summary:
      "List recent workflow runs from the run store; 'runs show RUN' (an id or last) shows one run's steps, 'runs logs RUN [STEP]' what they printed, 'runs wait RUN' waits for one to finish, 'runs cancel RUN' stops a running one, 'runs signal RUN NAME [JSON]' sends a run a signal.",
    operands: "[show RUN | logs RUN [STEP] | wait RUN | cancel RUN | signal RUN NAME [VALUE]]",
    options: [
      OptionSpec(
        name: "store", value: "URL", help: "read runs from URL (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "workflow", value: "NAME", help: "only runs of workflow NAME (for show: last means its last run)"),
      OptionSpec(name: "limit", value: "N", help: "list at most N runs (default \(defaultLimit))"),
      OptionSpec(
        name: "format", value: "text|gantt|chrome",
        help: "for show: text (default), a Mermaid gantt chart of the steps, or a Chrome trace of them for ui.perfetto.dev"),
    ] + RunsShowFilter.specs + [
      OptionSpec(name: "attempt", value: "N", help: "for logs: only attempt N of STEP"),
      OptionSpec(name: "follow", short: "f", help: "for logs: keep printing what a running run's steps print until it ends"),
      OptionSpec(name: "timeout", value: "SECONDS", help: "for wait: give up (exit 1) after SECONDS"),
    ],
    run: run
  )

  /// How many runs the list shows without `--limit`.
  static let defaultLimit = 20

  /// What the command line asks for.
  private enum Request {
    case list(limit: Int)
    case show(RunReference, format: Format, filter: RunsShowFilter)
    case logs(RunsLogsCommand.Request)

    /// True for the list of runs (which an empty store answers).
    var isList: Bool {
      if case .list = self { return true }
      return false
    }
  }

  /// How `runs show` writes a run.
  enum Format: String {
    case text, gantt, chrome
  }

  static func run(_ parsed: ParsedArguments) -> Int32 {
    if parsed.operands.first == "cancel" { return RunsCancelCommand.run(parsed) }
    if parsed.operands.first == "wait" { return RunsWait.run(parsed) }
    if parsed.operands.first == "signal" { return RunsSignalCommand.run(parsed) }
    if parsed.has("timeout") { return LunarCommandLine.usageFailure(UsageError(message: "--timeout is for runs wait", command: "runs")) }
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
        if !request.isList {
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
      case .logs(let logs):
        return try RunsLogsCommand.run(logs, store: store, workflow: workflow)
      case .show(let reference, let format, let filter):
        let run = try store.resolve(reference, workflow: workflow)
        if let workflow, run.workflow != workflow {
          Console.error(
            "lunar: run \(run.id) in \(store.location) is of workflow '\(RunText.name(run.workflow))', not '\(RunText.name(workflow))'"
          )
          return 1
        }
        let recorded = try store.steps(of: run.id)
        if let step = filter.step, !recorded.contains(where: { $0.name == step }) {
          Console.error("lunar: run \(run.id) in \(store.location) has no step '\(RunText.name(step))'")
          return 1
        }
        let steps = filter.apply(to: recorded)
        let text =
          switch format {
          case .text: RunDetails.text(run, steps: steps, outputs: filter.outputs, filtered: filter.selects)
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
      for flag in ["format", "status", "step", "outputs"] where parsed.has(flag) {
        throw UsageError(message: "--\(flag) is for runs show, not for the list of runs", command: "runs")
      }
      for flag in ["attempt", "follow"] where parsed.has(flag) {
        throw UsageError(message: "--\(flag) is for runs logs, not for the list of runs", command: "runs")
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
      for flag in ["attempt", "follow"] where parsed.has(flag) {
        throw UsageError(message: "--\(flag) is for runs logs, not for runs show", command: "runs")
      }
      let filter = try RunsShowFilter(parsed)
      let name = parsed.value("format") ?? "text"
      guard let format = Format(rawValue: name) else {
        throw UsageError(message: "--format is 'text', 'gantt' or 'chrome', got '\(name)'", command: "runs")
      }
      do {
        return .show(try RunReference(parsing: parsed.operands[1]), format: format, filter: filter)
      } catch {
        throw UsageError(message: error.message, command: "runs")
      }
    case "logs":
      return .logs(try RunsLogsCommand.readRequest(parsed))
    case let word?:
      throw UsageError(
        message:
          "unknown word '\(word)': 'lunar runs' lists runs, 'lunar runs show RUN' shows one, 'lunar runs logs RUN' prints its logs",
        command: "runs")
    }
  }
}
