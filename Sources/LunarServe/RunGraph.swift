import Lunar
import LuaKit
import LunarStore
import Synchronization

/// A run's step graph on its page: its plan drawn by Graphviz's `dot` as
/// `lunar graph` draws a workflow, each step's node coloured by its status
/// (a class the site's stylesheet colours) and linked to its row. Drawings
/// are kept by their DOT text, so a live page redraws only when a step's
/// status changed.
final class RunGraph: Sendable {
  /// Plans of more steps than this are not drawn: the steps table lists
  /// what each step needs.
  static let stepLimit = 300
  /// How many drawings are kept.
  static let keptDrawings = 32

  /// What the page shows where the graph goes.
  enum Drawing: Equatable {
    /// The graph, as an `<svg>` element to put in the page.
    case svg(String)
    /// Why there is no graph, in one sentence for the user.
    case unavailable(String)
  }

  private let program: String
  private let kept = Mutex<(drawings: [String: String], order: [String])>(([:], []))

  /// A drawer that runs `program` (on `PATH`) as Graphviz's `dot`.
  init(program: String = "dot") {
    self.program = program
  }

  /// The graph of `run`'s plan with the statuses of its recorded `steps`;
  /// a step recorded but not planned (a run of an older Lunar) is left out.
  func drawing(of run: RunRecord, steps: [StepRecord]) -> Drawing {
    if run.status == .queued && run.plan.isEmpty {
      return .unavailable("The graph is drawn once a worker has loaded the run's file.")
    }
    guard let needs = run.plan.needs else {
      return .unavailable("This run was recorded without its steps' needs (by an older Lunar): no graph to draw.")
    }
    guard run.plan.count <= Self.stepLimit else {
      return .unavailable("\(run.plan.count) steps are too many to draw; the table below says what each step needs.")
    }
    guard !run.plan.isEmpty else { return .unavailable("The run planned no steps.") }
    let source = Self.dot(run, needs: needs, steps: steps)
    if let svg = kept.withLock({ $0.drawings[source] }) { return .svg(svg) }
    let svg: String
    do {
      svg = try render(source)
    } catch {
      return .unavailable(error.description)
    }
    kept.withLock { kept in
      if kept.drawings.updateValue(svg, forKey: source) == nil { kept.order.append(source) }
      while kept.order.count > Self.keptDrawings { kept.drawings[kept.order.removeFirst()] = nil }
    }
    return .svg(svg)
  }

  /// The DOT text of `run`'s plan: one node per planned step, classed by
  /// its status (`running` while its owner says so, `pending` until it is
  /// recorded) and linked to its row.
  static func dot(_ run: RunRecord, needs: [[Int]], steps: [StepRecord]) -> String {
    let status = Dictionary(steps.map { ($0.name, $0.status.rawValue) }, uniquingKeysWith: { _, last in last })
    let running = Set(run.running)
    let nodes = run.plan.indices.map { position in
      let name = run.plan[position]
      let state = status[name] ?? (running.contains(name) ? "running" : "pending")
      return WorkflowGraph.Step(
        name: name, needs: needs[position].map { run.plan[$0] }, classes: ["status", state],
        link: "#" + RunPage.rowID(name), tooltip: "\(GraphText.display(name)): \(state)")
    }
    return WorkflowGraph(name: run.workflow, steps: nodes).render(as: .dot)
  }

  /// Why a drawing failed, in one sentence.
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// `dot -Tsvg`'s picture of `source`, from its `<svg` element on: the
  /// XML declaration and doctype have no place inside HTML.
  private func render(_ source: String) throws(Failure) -> String {
    let outcome: FilterProcess.Outcome
    do {
      outcome = try FilterProcess.run(program, ["-Tsvg"], input: Array(source.utf8))
    } catch {
      if error.isMissing {
        throw Failure(description: "Graphviz's dot is not installed here, so there is no graph; the table below says what each step needs.")
      }
      throw Failure(description: "Graphviz's dot could not be started (\(error.reason)); the table below says what each step needs.")
    }
    let text = String(decoding: outcome.output, as: UTF8.self)
    guard outcome.status == 0, let start = text.range(of: "<svg") else {
      throw Failure(description: "Graphviz's dot could not draw this run (exit status \(outcome.status)); the table below says what each step needs.")
    }
    return String(text[start.lowerBound...])
  }
}
