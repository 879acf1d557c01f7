/// Timers ordered by deadline (then by creation, so equal deadlines fire in
/// the order they were set). Cancelled timers are skipped lazily. A timer
/// whose deadline never comes (infinite, or not a number) is not kept: it
/// must not make the loop wait for it or advance virtual time to it.
public final class TimerQueue {
  private struct Entry {
    let deadline: Double
    let id: Int
    let fire: () -> Void
    /// The wait the timer completes and nothing else, if it is one.
    weak var wait: Wait?
  }

  private var heap: [Entry] = []
  private var cancelled: Set<Int> = []
  /// Ids of timers in the heap and not cancelled: cancelling anything else
  /// (a timer that fired, or one that never comes) leaves no trace.
  private var live: Set<Int> = []
  private var nextID = 1

  /// True when no live timer is left.
  var isEmpty: Bool {
    dropCancelled()
    return heap.isEmpty
  }

  /// The earliest live deadline.
  var nextDeadline: Double? {
    dropCancelled()
    return heap.first?.deadline
  }

  /// Adds a timer at `deadline` (on the runtime clock); returns its id for
  /// `cancel`. A deadline that is not finite never fires. A timer whose only
  /// effect is to complete `wait` says so (a sleep's), so the loop can tell
  /// that firing it helps nobody while that wait's frame is held.
  @discardableResult
  public func schedule(at deadline: Double, completing wait: Wait? = nil, _ fire: @escaping () -> Void) -> Int {
    let id = nextID
    nextID += 1
    guard deadline.isFinite else { return id }
    live.insert(id)
    var entries = takeHeap()
    entries.append(Entry(deadline: deadline, id: id, fire: fire, wait: wait))
    Self.siftUp(&entries, from: entries.count - 1)
    heap = entries
    return id
  }

  /// Stops a timer from firing.
  public func cancel(_ id: Int) {
    if live.remove(id) != nil { cancelled.insert(id) }
  }

  /// True if a live timer may do more than complete one of `waits`.
  func hasTimer(besides waits: [Wait]) -> Bool {
    heap.contains { entry in
      guard !cancelled.contains(entry.id) else { return false }
      guard let wait = entry.wait else { return true }
      return !waits.contains { $0 === wait }
    }
  }

  /// Removes and returns the earliest timer if it is due at `now`.
  func popDue(at now: Double) -> (() -> Void)? {
    dropCancelled()
    guard let due = heap.first, due.deadline <= now else { return nil }
    let first = removeFirst()
    live.remove(first.id)
    return first.fire
  }

  private func dropCancelled() {
    while let first = heap.first, cancelled.contains(first.id) {
      cancelled.remove(first.id)
      _ = removeFirst()
    }
  }

  /// The heap, moved out of its property for reordering: no access to the
  /// property then spans a call, so none needs a run-time exclusivity check.
  private func takeHeap() -> [Entry] {
    let entries = heap
    heap = []
    return entries
  }

  /// Takes the earliest entry out of the heap; the caller releases it once
  /// the heap is back in its property.
  private func removeFirst() -> Entry {
    var entries = takeHeap()
    entries.swapAt(0, entries.count - 1)
    let first = entries.removeLast()
    if !entries.isEmpty { Self.siftDown(&entries, from: 0) }
    heap = entries
    return first
  }

  private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
    a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
  }

  private static func siftUp(_ heap: inout [Entry], from index: Int) {
    var child = index
    while child > 0 {
      let parent = (child - 1) / 2
      guard precedes(heap[child], heap[parent]) else { return }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private static func siftDown(_ heap: inout [Entry], from index: Int) {
    var parent = index
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count && precedes(heap[left], heap[smallest]) { smallest = left }
      if right < heap.count && precedes(heap[right], heap[smallest]) { smallest = right }
      if smallest == parent { return }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
