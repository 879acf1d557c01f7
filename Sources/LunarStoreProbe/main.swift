// A child process for the store's tests: writes the steps of one run to a
// store, printing a line after each commit, so a test can kill it at any
// point (or race two of them) and check that what it reported is there.
//
//   LunarStoreProbe write STORE WORKFLOW STEPS BATCH SEED
//
// STORE is a SQLite file's path or a postgres:// URL.
// prints `run ID`, then `committed NAME SHA256-OF-OUTPUT` for each step of
// each committed batch, then `done`.
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

let arguments = CommandLine.arguments
guard arguments.count == 7, arguments[1] == "write", let steps = Int(arguments[4]), let batch = Int(arguments[5]),
  batch > 0, let seed = UInt64(arguments[6])
else { fail("usage: LunarStoreProbe write STORE WORKFLOW STEPS BATCH SEED") }
let workflow = arguments[3]

do {
  let store: any RunStore =
    arguments[2].hasPrefix("postgres")
    ? try StoreLocation(parsing: arguments[2], currentFolder: "/").openRunStore() : try SQLiteRunStore(path: arguments[2])
  let run = try store.beginRun(NewRun(workflow: LuaString(workflow), file: "probe.lua", arguments: [arguments[6]]))
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
} catch {
  fail("\(error)")
}
