import LuaKit
import Lunar
import LunarStore

/// `lunar queue`: the durable queues of the store. `queue ls` lists them,
/// `queue show NAME` shows a queue's newest jobs, `queue resume NAME` lets a
/// queue a failure halted go on. It reads the store `lunar run` and
/// `lunar worker` use and never creates one.
enum QueueCommand {
  static let spec = CommandSpec(
    name: "queue",
    summary: "List the store's durable queues; 'queue show NAME' shows one's jobs, 'queue resume NAME' lets a halted one go on.",
    operands: "ls | show NAME | resume NAME",
    options: [
      OptionSpec(
        name: "store", value: "URL", help: "use the queues in URL (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "limit", value: "N", help: "show: at most the newest N jobs (default \(defaultLimit))"),
    ],
    run: run
  )

  /// How many jobs `queue show` prints without `--limit`.
  static let defaultLimit = 20

  /// What the command line asks for.
  private enum Request {
    case list
    case show(LuaString, limit: Int)
    case resume(LuaString)
  }

  static func run(_ parsed: ParsedArguments) -> Int32 {
    let request: Request
    let location: StoreLocation
    do {
      request = try readRequest(parsed)
      location = try StoreOption.location(parsed, command: "queue")
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    do {
      let store: any QueueStore
      do {
        // Listing and showing only read, so a store in a folder the user
        // may not write is read.
        var readOnly = true
        if case .resume = request { readOnly = false }
        store = try location.openQueueStore(createIfMissing: false, options: .init(readOnly: readOnly))
      } catch where error.kind == .missing {
        // Reading never creates a store: there are no queues yet.
        switch request {
        case .list:
          print("no queues in \(location) (there is no store there yet)")
          return 0
        case .show(let name, _), .resume(let name):
          Console.error("lunar: no queue '\(RunText.name(name))' in \(location): there is no store there yet")
          return 1
        }
      }
      let now = StoreTimestamp.now
      switch request {
      case .list:
        var rows: [QueueTable.Row] = []
        for summary in try store.queues() { rows.append(try row(of: summary, in: store)) }
        if rows.isEmpty {
          print("no queues in \(store.location)")
        } else {
          print(QueueTable.text(rows, now: now), terminator: "")
        }
      case .show(let name, let limit):
        guard let summary = try store.queues().first(where: { $0.name == name }) else {
          return unknown(name, in: store)
        }
        let jobs = try store.jobs(queue: name, limit: limit)
        print(QueueDetails.text(try row(of: summary, in: store), jobs: jobs, now: now), terminator: "")
      case .resume(let name):
        guard let summary = try store.queues().first(where: { $0.name == name }) else {
          return unknown(name, in: store)
        }
        let halting = try row(of: summary, in: store).haltedBy
        do {
          if try store.resume(queue: name) {
            let by = halting.map { " by job " + QueueText.place($0) } ?? ""
            print("queue '\(RunText.name(name))' was halted\(by); resumed: its next job may start")
          } else {
            print("queue '\(RunText.name(name))' was not halted: nothing to resume")
          }
        } catch where error.kind == .noSuchQueue {
          return unknown(name, in: store)
        }
      }
      return 0
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }

  /// `summary` with the places of the jobs it names by id.
  private static func row(of summary: QueueSummary, in store: any QueueStore) throws(StoreError) -> QueueTable.Row {
    func place(_ id: JobID?) throws(StoreError) -> Int64? {
      guard let id else { return nil }
      return try store.job(id)?.sequence
    }
    return QueueTable.Row(summary: summary, running: try place(summary.running), haltedBy: try place(summary.haltedBy))
  }

  /// Reports that no job was ever submitted to `name`; returns 1.
  private static func unknown(_ name: LuaString, in store: any QueueStore) -> Int32 {
    Console.error("lunar: no queue '\(RunText.name(name))' in \(store.location)")
    return 1
  }

  /// The list, queue or resumption the operands and flags ask for.
  private static func readRequest(_ parsed: ParsedArguments) throws(UsageError) -> Request {
    let operands = parsed.operands
    func name(_ word: String) throws(UsageError) -> LuaString {
      guard operands.count == 2 else {
        let message =
          operands.count < 2 ? "queue \(word) needs a queue NAME" : "queue \(word) takes one NAME, got \(operands.count - 1)"
        throw UsageError(message: message, command: "queue")
      }
      guard !operands[1].isEmpty else { throw UsageError(message: "a queue NAME must not be empty", command: "queue") }
      // Names are bytes: the one asked for is matched by the bytes typed.
      return parsed.operandBytes[1]
    }
    func refuseLimit(_ word: String) throws(UsageError) {
      if parsed.has("limit") { throw UsageError(message: "--limit is for queue show, not for queue \(word)", command: "queue") }
    }
    switch operands.first {
    case "ls":
      guard operands.count == 1 else {
        throw UsageError(message: "queue ls takes no operands, got '\(operands[1])'", command: "queue")
      }
      try refuseLimit("ls")
      return .list
    case "show":
      let queue = try name("show")
      var limit = defaultLimit
      if let text = parsed.value("limit") {
        guard let number = Int(text), number > 0 else {
          throw UsageError(message: "--limit needs a positive number of jobs, got '\(text)'", command: "queue")
        }
        limit = number
      }
      return .show(queue, limit: limit)
    case "resume":
      let queue = try name("resume")
      try refuseLimit("resume")
      return .resume(queue)
    case nil:
      throw UsageError(message: "queue needs ls, show NAME or resume NAME", command: "queue")
    case let word?:
      throw UsageError(
        message: "unknown word '\(RunText.printable(word))': use queue ls, queue show NAME or queue resume NAME",
        command: "queue")
    }
  }
}
