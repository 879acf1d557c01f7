// A child process for the store's tests, in one of two modes.
//
//   LunarStoreProbe write STORE WORKFLOW STEPS BATCH SEED
//
// writes the steps of one run to a store, printing a line after each
// commit, so a test can kill it at any point (or race two of them) and
// check that what it reported is there: `run ID`, then `committed NAME
// SHA256-OF-OUTPUT` for each step of each committed batch, then `done`.
//
//   LunarStoreProbe queue STORE WORKER SUBMIT TOTAL QUEUES SEED
//
// submits SUBMIT jobs to queues chosen at random among QUEUES, while
// claiming and completing jobs as worker WORKER, until the store holds
// TOTAL jobs, all finished: prints `submitted ID QUEUE SEQUENCE INDEX` for
// each job it submitted, `ran ID TOKEN ATTEMPT succeeded|failed` for each
// it completed, then `done`.
//
//   LunarStoreProbe submit STORE QUEUE COUNT
//   LunarStoreProbe drain STORE WORKER COUNT
//
// submit COUNT jobs to QUEUE, or claim and complete jobs (each completion
// claiming the next, as `lunar worker` does) until COUNT have finished;
// both then print `peak-wal BYTES`, the largest size of the SQLite file's
// write-ahead log seen after any of their commits, then `done`.
//
// STORE is a SQLite file's path or a postgres:// URL.
import Glibc
import LuaKit
import LunarStore
import TestSupport


/// A step's output with every kind of value in it, varying with `random`.
func output(_ random: inout SplitMix64, step: Int) -> [LuaValue] {
  let bytes = (0..<random.below(40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
  var table = LuaTable(array: [.integer(Int64(step)), .string(LuaString(bytes: bytes)), .number(-0.0)])
  table[.integer(Int64(10 + random.below(5)))] = .boolean(true)  // a gap: keyed, not array
  table[.boolean(random.below(2) == 0)] = .number(Double(bitPattern: 0x7FF8_0000_0000_0000 | (random.next() >> 13)))
  table[.number(Double(random.below(1000)) + 0.5)] = .number(.infinity)
  table["nested"] = .table(LuaTable(array: [.string(LuaString(bytes: [0, 0xFF])), .integer(Int64(bitPattern: random.next()))]))
  return random.below(4) == 0 ? [] : [.table(table), .nil]
}

func say(_ line: String) {
  let text = Array((line + "\n").utf8)
  _ = text.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
  let text = Array(("LunarStoreProbe: " + message + "\n").utf8)
  _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
  exit(1)
}

/// Opens the queues of the store `store` names.
func openQueues(_ store: String) throws -> any QueueStore {
  store.hasPrefix("postgres")
    ? try StoreLocation(parsing: store, currentFolder: "/").openQueueStore() : try SQLiteQueueStore(path: store)
}

/// The bytes of queue number `index`: not UTF-8, as names are bytes.
func queueName(_ index: Int) -> LuaString { LuaString(bytes: Array("q\(index)".utf8) + [0xFF]) }

/// The `queue` mode: submits and works until every job of the store is done.
func work(store: String, worker: String, submit: Int, total: Int64, queues: Int, seed: UInt64) throws {
  let store = try openQueues(store)
  var random = SplitMix64(seed: seed)
  var submitted = 0
  while true {
    if submitted < submit {
      let queue = random.below(queues)
      let input = try LuaValueCodec.encode([.string(LuaString(worker)), .integer(Int64(submitted))])
      let job = try store.enqueue(queue: queueName(queue), action: "probe", input: input, policy: .continue, at: .now)
      say("submitted \(job.id) \(queue) \(job.sequence) \(submitted)")
      submitted += 1
    }
    if let job = try store.claim(worker: WorkerID(worker), queues: nil, lease: .seconds(60), at: .now) {
      _ = try store.heartbeat(job: job.id, token: job.token, lease: .seconds(60), at: .now)
      let fails = random.below(8) == 0
      let outcome: JobOutcome =
        fails ? .failed(error: Array("job \(job.id) failed".utf8)) : .succeeded(output: try LuaValueCodec.encode([.integer(job.sequence)]))
      try store.complete(job: job.id, token: job.token, outcome: outcome, at: .now)
      say("ran \(job.id) \(job.token) \(job.attempt) \(outcome.status.rawValue)")
    } else if submitted == submit {
      let summaries = try store.queues()
      if summaries.map(\.submitted).reduce(0, +) == total && summaries.allSatisfy({ $0.waiting == 0 && $0.running == nil }) {
        break
      }
      usleep(500)
    }
  }
  say("done")
}

/// The size of the write-ahead log of the SQLite store `store` (0 when it
/// has none).
func walSize(_ store: String) -> Int {
  var info = stat()
  return stat(store + "-wal", &info) == 0 ? Int(info.st_size) : 0
}

/// The `submit` mode: submits `count` jobs to `queue`, one transaction each.
func submit(store: String, queue: String, count: Int) throws {
  let queues = try openQueues(store)
  var peak = 0
  for index in 0..<count {
    let input = try LuaValueCodec.encode([.integer(Int64(index))])
    _ = try queues.enqueue(queue: LuaString(queue), action: "probe", input: input, policy: .continue, at: .now)
    peak = max(peak, walSize(store))
  }
  say("peak-wal \(peak)")
  say("done")
}

/// The `drain` mode: completes `count` jobs, as a worker does.
func drain(store: String, worker: String, count: Int) throws {
  let queues = try openQueues(store)
  let (name, lease) = (WorkerID(worker), Duration.seconds(60))
  var peak = 0
  var finished = 0
  var job = try queues.claim(worker: name, queues: nil, lease: lease, at: .now)
  while finished < count {
    guard let claimed = job else {
      // The submitter is behind.
      usleep(200)
      job = try queues.claim(worker: name, queues: nil, lease: lease, at: .now)
      continue
    }
    let outcome = JobOutcome.succeeded(output: try LuaValueCodec.encode([.integer(claimed.sequence)]))
    finished += 1
    if finished == count {
      try queues.complete(job: claimed.id, token: claimed.token, outcome: outcome, at: .now)
      job = nil
    } else {
      job = try queues.complete(
        job: claimed.id, token: claimed.token, outcome: outcome, at: .now, thenClaimFor: name, queues: nil, lease: lease)
    }
    peak = max(peak, walSize(store))
  }
  say("peak-wal \(peak)")
  say("done")
}

/// The `write` mode: writes the steps of one run.
func write(store: String, workflow: String, steps: Int, batch: Int, seed: UInt64) throws {
  let store: any RunStore =
    store.hasPrefix("postgres")
    ? try StoreLocation(parsing: store, currentFolder: "/").openRunStore() : try SQLiteRunStore(path: store)
  let run = try store.beginRun(NewRun(workflow: LuaString(workflow), file: "probe.lua", arguments: [String(seed)]))
  say("run \(run)")
  var random = SplitMix64(seed: seed)
  var step = 0
  while step < steps {
    var records: [StepRecord] = []
    var lines: [String] = []
    for _ in 0..<min(batch, steps - step) {
      let values = output(&random, step: step)
      let name = LuaString(bytes: Array("\(workflow)-\(step)".utf8) + [0xFF])  // not UTF-8: names are bytes
      records.append(
        StepRecord(
          name: name, position: step, status: .succeeded, attempts: 1, startedAt: .now, finishedAt: .now,
          fingerprint: try Fingerprint(of: [.string(name)]), output: values))
      lines.append("committed \(step) \(try Fingerprint(of: values).hex)")
      step += 1
    }
    try store.recordSteps(records, of: run)
    for line in lines { say(line) }
    // A reader between writes, as `lunar runs` in another terminal would be.
    if step % 16 == 0 { _ = try store.runs(workflow: nil, limit: 3) }
  }
  try store.finishRun(run, status: .succeeded, at: .now)
  say("done")
}

let arguments = CommandLine.arguments
do {
  if arguments.count == 7, arguments[1] == "write", let steps = Int(arguments[4]), let batch = Int(arguments[5]),
    batch > 0, let seed = UInt64(arguments[6])
  {
    try write(store: arguments[2], workflow: arguments[3], steps: steps, batch: batch, seed: seed)
  } else if arguments.count == 8, arguments[1] == "queue", let submit = Int(arguments[4]), let total = Int64(arguments[5]),
    let queues = Int(arguments[6]), queues > 0, let seed = UInt64(arguments[7])
  {
    try work(store: arguments[2], worker: arguments[3], submit: submit, total: total, queues: queues, seed: seed)
  } else if arguments.count == 5, arguments[1] == "submit", let count = Int(arguments[4]) {
    try submit(store: arguments[2], queue: arguments[3], count: count)
  } else if arguments.count == 5, arguments[1] == "drain", let count = Int(arguments[4]) {
    try drain(store: arguments[2], worker: arguments[3], count: count)
  } else {
    fail(
      "usage: LunarStoreProbe write STORE WORKFLOW STEPS BATCH SEED | queue STORE WORKER SUBMIT TOTAL QUEUES SEED"
        + " | submit STORE QUEUE COUNT | drain STORE WORKER COUNT")
  }
} catch {
  fail("\(error)")
}
