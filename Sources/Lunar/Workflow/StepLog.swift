import LuaKit
import LunarStore

/// What one attempt of a workflow step prints, kept for the run store:
/// every task of the attempt (and the tasks they spawn) writes here through
/// `LuaTask.stepLog`. Bytes are kept as written, up to `limit` per attempt;
/// past it they are counted, and `finish` ends the stored log with a line
/// saying how many were dropped. Loop thread only.
final class StepLog {
  /// The step's name.
  let step: LuaString
  /// The step's declaration position, from 0.
  let position: Int
  /// The attempt, from 1 (counting a resumed run's earlier attempts).
  let attempt: Int
  /// The most bytes stored for the attempt (the marker line aside).
  let limit: Int
  /// Called when bytes arrive with none pending: the owner flushes soon.
  var onPending: (() -> Void)?

  private var pending: [StepLogChunk] = []
  private var nextSequence = 1
  private var kept = 0
  private var dropped = 0
  private var lastByte: UInt8?
  private var finished = false

  /// The log of attempt `attempt` of the step `step` at `position`.
  init(step: LuaString, position: Int, attempt: Int, limit: Int) {
    self.step = step
    self.position = position
    self.attempt = attempt
    self.limit = limit
  }

  /// Keeps `bytes`, written to `stream`; a write that follows one to the
  /// same stream joins its chunk.
  func append(_ bytes: UnsafeRawBufferPointer, to stream: StepLogStream) {
    guard !finished, !bytes.isEmpty else { return }
    let room = max(0, limit - kept)
    let taken = min(room, bytes.count)
    dropped += bytes.count - taken
    guard taken > 0 else { return }
    kept += taken
    lastByte = bytes[taken - 1]
    let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<taken])
    if let last = pending.indices.last, pending[last].stream == stream {
      pending[last].bytes.append(contentsOf: piece)
      return
    }
    pending.append(
      StepLogChunk(step: step, position: position, attempt: attempt, sequence: nextSequence, stream: stream, bytes: Array(piece)))
    nextSequence += 1
    if pending.count == 1 { onPending?() }
  }

  /// Keeps a log line (`ctx.log`, a machine's `log`) and its newline, as
  /// written to standard error.
  func appendLine(_ line: String) {
    appendLine(bytes: Array(line.utf8))
  }

  /// Keeps a log line given as bytes, and its newline, as written to
  /// standard error.
  func appendLine(bytes line: [UInt8]) {
    (line + [UInt8(ascii: "\n")]).withUnsafeBytes { append($0, to: .standardError) }
  }

  /// The chunks kept since the last call, to be stored.
  func take() -> [StepLogChunk] {
    defer { pending.removeAll() }
    return pending
  }

  /// Ends the attempt's log: nothing written later is kept. Returns the
  /// chunks still to store, with the marker line if bytes were dropped.
  func finish() -> [StepLogChunk] {
    guard !finished else { return take() }
    if dropped > 0 {
      let newline = lastByte == UInt8(ascii: "\n") ? "" : "\n"
      let marker =
        "\(newline)[lunar: \(dropped) more bytes were not stored: a step's log keeps at most \(limit) bytes per attempt]\n"
      pending.append(
        StepLogChunk(
          step: step, position: position, attempt: attempt, sequence: nextSequence, stream: .standardOutput,
          bytes: Array(marker.utf8)))
      nextSequence += 1
    }
    finished = true
    return take()
  }
}
