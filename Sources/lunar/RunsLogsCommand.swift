import Glibc
import LuaKit
import Lunar
import LunarStore

/// `lunar runs logs RUN [STEP] [--attempt N] [--follow]`: prints what the
/// steps of a run printed, as the store kept it (bytes as written), each
/// step attempt under a header line; only the bytes when STEP and
/// `--attempt` name one attempt. `--follow` keeps printing what a running
/// run's steps print until the run ends.
enum RunsLogsCommand {
  /// What the command line asks for.
  struct Request {
    /// The run.
    let run: RunReference
    /// One step's name as bytes, or nil for every step.
    let step: LuaString?
    /// One attempt, or nil for every one.
    let attempt: Int?
    /// Keep printing until the run ends.
    let follow: Bool
  }

  /// How often `--follow` reads the store for more.
  static let followInterval = 0.2

  /// The request `runs logs` operands and flags make (`parsed.operands[0]`
  /// is `logs`).
  static func readRequest(_ parsed: ParsedArguments) throws(UsageError) -> Request {
    guard parsed.operands.count == 2 || parsed.operands.count == 3 else {
      let message =
        parsed.operands.count < 2
        ? "runs logs needs a RUN: a run id or last" : "runs logs takes a RUN and at most one STEP, got \(parsed.operands.count - 1) words"
      throw UsageError(message: message, command: "runs")
    }
    for flag in ["limit", "format", "status", "step", "outputs"] where parsed.has(flag) {
      throw UsageError(message: "--\(flag) is not for runs logs", command: "runs")
    }
    var attempt: Int?
    if let text = parsed.value("attempt") {
      guard let number = Int(text), number > 0 else {
        throw UsageError(message: "--attempt needs a positive attempt number, got '\(RunText.printable(text))'", command: "runs")
      }
      attempt = number
    }
    let step = parsed.operands.count == 3 ? parsed.operandBytes[2] : nil
    if attempt != nil && step == nil {
      throw UsageError(message: "--attempt needs a STEP: runs logs RUN STEP --attempt N", command: "runs")
    }
    do {
      return Request(run: try RunReference(parsing: parsed.operands[1]), step: step, attempt: attempt, follow: parsed.has("follow"))
    } catch {
      throw UsageError(message: error.message, command: "runs")
    }
  }

  /// Prints the logs `request` asks for from `store`; the exit status.
  static func run(_ request: Request, store: any RunStore, workflow: LuaString?) throws(StoreError) -> Int32 {
    var run = try store.resolve(request.run, workflow: workflow)
    let steps = try store.steps(of: run.id)
    var chunks = try store.stepLogs(of: run.id, step: request.step, attempt: request.attempt, after: 0)
    if let step = request.step {
      let record = steps.first { $0.name == step }
      let stillRunning = run.status == .running && request.follow
      if record == nil && chunks.isEmpty && !stillRunning {
        Console.error("lunar: run \(run.id) in \(store.location) has no step '\(RunText.name(step))'")
        return 1
      }
      if let attempt = request.attempt, let record, record.status != .reused, record.status != .skipped,
        attempt > record.attempts, !chunks.contains(where: { $0.attempt == attempt })
      {
        Console.error(
          "lunar: step '\(RunText.name(step))' of run \(run.id) has no attempt \(attempt) (it made \(record.attempts))")
        return 1
      }
    }
    let output = FileOutput(descriptor: 1)
    let headers = request.step == nil || request.attempt == nil
    var printer = Printer(output: output, headers: headers)
    if !request.follow {
      // Step by step in declaration order, each attempt in turn.
      chunks.sort { ($0.position, $0.attempt, $0.sequence, $0.id) < ($1.position, $1.attempt, $1.sequence, $1.id) }
      if chunks.isEmpty && request.step == nil {
        Console.error("lunar: run \(run.id) in \(store.location) has no stored logs")
      }
      return printer.print(chunks) ? 0 : 1
    }
    // Following: in the order they were stored, until the run ends (its
    // last chunks are committed before its end is).
    guard printer.print(chunks) else { return 1 }
    var last = chunks.last?.id ?? 0
    while run.status == .running && !RunText.processIsGone(run) {
      usleep(useconds_t(followInterval * 1e6))
      run = try store.run(run.id) ?? run
      let more = try store.stepLogs(of: run.id, step: request.step, attempt: request.attempt, after: last)
      guard printer.print(more) else { return 1 }
      last = more.last?.id ?? last
    }
    let rest = try store.stepLogs(of: run.id, step: request.step, attempt: request.attempt, after: last)
    return printer.print(rest) ? 0 : 1
  }

  /// Writes chunks, with a header line before each new step attempt.
  private struct Printer {
    let output: FileOutput
    let headers: Bool
    private var current: (LuaString, Int)?
    private var lastByte: UInt8?

    init(output: FileOutput, headers: Bool) {
      self.output = output
      self.headers = headers
    }

    /// False once a write failed (a closed pipe).
    mutating func print(_ chunks: [StepLogChunk]) -> Bool {
      var bytes: [UInt8] = []
      for chunk in chunks {
        if headers, current.map({ $0.0 != chunk.step || $0.1 != chunk.attempt }) ?? true {
          // A header starts a line of its own, even after a log that did not end one.
          if let lastByte, lastByte != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
          bytes += Array("==> step \(RunText.name(chunk.step)), attempt \(chunk.attempt) <==\n".utf8)
          current = (chunk.step, chunk.attempt)
        }
        bytes += chunk.bytes
        lastByte = bytes.last
      }
      guard !bytes.isEmpty else { return true }
      return (try? output.write(bytes: bytes)) != nil
    }
  }
}
