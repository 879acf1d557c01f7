/// A first-in, first-out queue in a ring buffer: the scheduler's ready
/// tasks and deferred work, a queue's waiting jobs, a machine's mailbox.
/// Appending and taking the first element cost amortised O(1) and allocate
/// nothing once the buffer has grown to the queue's peak length; an element
/// taken out is released at once, never kept in a dead slot.
///
/// A class, owned by one object on one thread: its owner holds it in a
/// `let`, and every stored property here is a plain number or pointer
/// changed by a plain store, so the compiler proves each access exclusive
/// and no run-time exclusivity check is left on these hot paths (a struct
/// held in a class's `var` would pay one per operation).
final class Deque<Element>: Sequence {
  /// `capacity` slots, nil until the first append; slots `head` up to
  /// `head + count` (wrapping around) hold the elements, the rest are
  /// uninitialized.
  private var slots: UnsafeMutablePointer<Element>?
  /// The number of slots: 0 or a power of two, so wrapping is a mask.
  private(set) var capacity = 0
  /// The slot of the first element.
  private var head = 0
  /// Elements waiting.
  private(set) var count = 0

  /// The capacity of the first buffer.
  static var initialCapacity: Int { 16 }

  /// An empty queue; it allocates on the first append.
  init() {}

  deinit {
    removeAll()
    slots?.deallocate()
  }

  /// True when no element waits.
  var isEmpty: Bool { count == 0 }

  /// The oldest element, left in place; nil when empty.
  var first: Element? { count == 0 ? nil : slots![head] }

  /// Adds `element` after the others.
  func append(_ element: Element) {
    if count == capacity { grow() }
    (slots! + ((head + count) & (capacity - 1))).initialize(to: element)
    count += 1
  }

  /// Takes the oldest element out; nil when empty.
  func popFirst() -> Element? {
    guard count > 0 else { return nil }
    let element = (slots! + head).move()
    head = (head + 1) & (capacity - 1)
    count -= 1
    return element
  }

  /// Drops every element, oldest first, keeping the buffer. Each is taken
  /// out before it is released, so a deinit that uses this queue finds it
  /// consistent.
  func removeAll() {
    while popFirst() != nil {}
  }

  /// The elements, oldest first. An iterator reads the queue as it is at
  /// each step: changes made while iterating are seen, never a freed slot.
  func makeIterator() -> Iterator { Iterator(deque: self) }

  var underestimatedCount: Int { count }

  /// Reads a deque's elements in order.
  struct Iterator: IteratorProtocol {
    fileprivate let deque: Deque
    fileprivate var offset = 0

    mutating func next() -> Element? {
      guard offset < deque.count else { return nil }
      defer { offset += 1 }
      return deque.element(at: offset)
    }
  }

  /// The element `offset` places after the first; `offset < count`.
  fileprivate func element(at offset: Int) -> Element {
    slots![(head + offset) & (capacity - 1)]
  }

  /// Doubles the buffer, moving the elements to its start in order.
  private func grow() {
    let newCapacity = capacity == 0 ? Self.initialCapacity : capacity * 2
    let newSlots = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
    if let slots {
      let beforeWrap = Swift.min(count, capacity - head)
      newSlots.moveInitialize(from: slots + head, count: beforeWrap)
      (newSlots + beforeWrap).moveInitialize(from: slots, count: count - beforeWrap)
      slots.deallocate()
    }
    slots = newSlots
    capacity = newCapacity
    head = 0
  }
}
