/// A machine's messages, oldest first, kept in chunks of a fixed size: a
/// burst of sends never moves the messages already queued (one growing
/// array would copy them all at each doubling, into fresh memory), and
/// each chunk is freed once it has been read.
final class Mailbox {
  /// Messages per chunk.
  static let chunkSize = 256

  /// Chunks of `chunkSize` slots. Those before `head` have been read and
  /// freed; slots `next..<chunkSize` of `chunks[head]` (or `next..<end` if
  /// it is the last) and `0..<end` of the last chunk hold messages.
  private var chunks: [UnsafeMutablePointer<MachineMessage>] = []
  private var head = 0
  /// The next slot to read, in `chunks[head]`.
  private var next = 0
  /// The next slot to write, in the last chunk.
  private var end = 0
  /// Messages waiting.
  private(set) var count = 0

  /// True when no message waits.
  var isEmpty: Bool { count == 0 }

  /// Queues `message` after the others.
  func append(_ message: MachineMessage) {
    if chunks.isEmpty || end == Self.chunkSize {
      chunks.append(.allocate(capacity: Self.chunkSize))
      end = 0
    }
    (chunks[chunks.count - 1] + end).initialize(to: message)
    end += 1
    count += 1
  }

  /// Takes the oldest message out; nil if none waits.
  func removeFirst() -> MachineMessage? {
    guard count > 0 else { return nil }
    let message = (chunks[head] + next).move()
    next += 1
    count -= 1
    if count == 0 {
      // Everything is read, so `head` is the last chunk: keep it for the
      // next message, so a machine that receives one message at a time
      // allocates nothing.
      let last = chunks[head]
      chunks.removeAll(keepingCapacity: true)
      chunks.append(last)
      head = 0
      next = 0
      end = 0
    } else if next == Self.chunkSize {
      chunks[head].deallocate()
      head += 1
      next = 0
    }
    return message
  }

  /// Drops every message.
  func removeAll() {
    while removeFirst() != nil {}
  }

  deinit {
    removeAll()
    for chunk in chunks[head...] { chunk.deallocate() }
  }
}
