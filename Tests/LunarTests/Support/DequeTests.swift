import LuaKit
import Testing

@testable import Lunar

@Suite struct DequeTests {
  /// Counts the deinits of the objects it made.
  private final class Census {
    var released = 0
  }

  private final class Tracked {
    let number: Int
    let census: Census
    /// Run by deinit, before the release is counted.
    var onRelease: (() -> Void)?

    init(_ number: Int, _ census: Census) {
      self.number = number
      self.census = census
    }

    deinit {
      onRelease?()
      census.released += 1
    }
  }

  /// SplitMix64: the same sequence on every run, so a failure replays.
  private struct Generator {
    var state: UInt64

    mutating func next(below bound: Int) -> Int {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return Int((z ^ (z >> 31)) % UInt64(bound))
    }
  }

  @Test func anEmptyDequeHasNothingToGive() {
    let deque = Deque<Int>()
    #expect(deque.isEmpty)
    #expect(deque.count == 0)
    #expect(deque.first == nil)
    #expect(deque.popFirst() == nil)
    #expect(deque.popFirst() == nil)
    #expect(Array(deque) == [])
    #expect(deque.capacity == 0, "nothing is allocated before the first append")
    deque.append(7)
    #expect(deque.popFirst() == 7)
    #expect(deque.popFirst() == nil)
    #expect(deque.isEmpty)
  }

  @Test func elementsWrapAroundTheEndOfTheBuffer() {
    let deque = Deque<Int>()
    let capacity = Deque<Int>.initialCapacity
    for n in 0..<capacity { deque.append(n) }
    for n in 0..<(capacity - 3) { #expect(deque.popFirst() == n) }
    // The next appends go to the slots at the start of the buffer.
    for n in capacity..<(capacity + 10) { deque.append(n) }
    #expect(deque.capacity == capacity, "no growth while there is room")
    #expect(deque.count == 13)
    #expect(deque.first == capacity - 3)
    #expect(Array(deque) == Array((capacity - 3)..<(capacity + 10)))
    var out: [Int] = []
    while let next = deque.popFirst() { out.append(next) }
    #expect(out == Array((capacity - 3)..<(capacity + 10)))
  }

  @Test func growingWhileWrappedKeepsTheOrder() {
    let deque = Deque<Int>()
    let capacity = Deque<Int>.initialCapacity
    for n in 0..<capacity { deque.append(n) }
    for n in 0..<5 { #expect(deque.popFirst() == n) }
    // Full again, with the oldest element in the middle of the buffer.
    for n in capacity..<(capacity + 5) { deque.append(n) }
    #expect(deque.count == capacity)
    #expect(deque.capacity == capacity)
    deque.append(capacity + 5)
    #expect(deque.capacity == capacity * 2)
    #expect(Array(deque) == Array(5...(capacity + 5)))
    // Wrap again in the grown buffer, and grow once more.
    var expected = Array(5...(capacity + 5))
    for n in 0..<(capacity * 3) {
      deque.append(1000 + n)
      expected.append(1000 + n)
      if n % 3 == 0 { #expect(deque.popFirst() == expected.removeFirst()) }
    }
    #expect(Array(deque) == expected)
    #expect(deque.count == expected.count)
  }

  @Test func aLongRandomRunMatchesAnArray() {
    var random = Generator(state: 18)
    let deque = Deque<Int>()
    var model: [Int] = []
    var next = 0
    for step in 0..<20_000 {
      switch random.next(below: 100) {
      case 0..<52:
        // More appends than pops, in bursts, so the buffer grows and wraps.
        for _ in 0..<(1 + random.next(below: 4)) {
          deque.append(next)
          model.append(next)
          next += 1
        }
      case 52..<98:
        #expect(deque.popFirst() == model.first, "step \(step)")
        if !model.isEmpty { model.removeFirst() }
      case 98:
        #expect(Array(deque) == model, "step \(step)")
      default:
        if random.next(below: 10) == 0 {
          deque.removeAll()
          model.removeAll()
        }
      }
      #expect(deque.count == model.count, "step \(step)")
      #expect(deque.isEmpty == model.isEmpty, "step \(step)")
      #expect(deque.first == model.first, "step \(step)")
    }
    #expect(Array(deque) == model)
  }

  @Test func aSteadyQueueStopsAllocating() {
    let deque = Deque<Int>()
    for n in 0..<100 { deque.append(n) }
    let grown = deque.capacity
    for n in 100..<10_000 {
      deque.append(n)
      #expect(deque.popFirst() == n - 100)
    }
    #expect(deque.capacity == grown, "the same buffer serves a queue that does not get longer")
  }

  @Test func poppedElementsAreReleasedAtOnce() {
    let census = Census()
    let deque = Deque<Tracked>()
    let capacity = Deque<Tracked>.initialCapacity
    for n in 0..<capacity { deque.append(Tracked(n, census)) }
    #expect(deque.popFirst()?.number == 0)
    #expect(census.released == 1)
    // Wrapped and grown: the elements moved, none was copied or leaked.
    for n in capacity..<(capacity + 4) { deque.append(Tracked(n, census)) }
    #expect(deque.capacity == capacity * 2)
    #expect(census.released == 1)
    _ = deque.popFirst()
    _ = deque.popFirst()
    #expect(census.released == 3)
    deque.removeAll()
    #expect(census.released == capacity + 4)
    #expect(deque.isEmpty)
  }

  @Test func freeingTheDequeReleasesWhatIsLeft() {
    let census = Census()
    var deque: Deque<Tracked>? = Deque()
    for n in 0..<20 { deque?.append(Tracked(n, census)) }
    for _ in 0..<5 { _ = deque?.popFirst() }
    #expect(census.released == 5)
    deque = nil
    #expect(census.released == 20)
  }

  @Test func aReleaseThatAppendsFindsTheDequeConsistent() {
    let census = Census()
    let deque = Deque<Tracked>()
    do {
      let first = Tracked(0, census)
      first.onRelease = { deque.append(Tracked(99, census)) }
      deque.append(first)
    }
    deque.append(Tracked(1, census))
    deque.removeAll()
    #expect(deque.isEmpty, "the element appended while emptying is dropped too")
    #expect(census.released == 3)
    deque.append(Tracked(2, census))
    #expect(deque.popFirst()?.number == 2)
  }

  @Test func iterationSeesTheElementsInOrderWithoutTakingThem() {
    let deque = Deque<String>()
    for word in ["a", "b", "c", "d"] { deque.append(word) }
    _ = deque.popFirst()
    deque.append("e")
    #expect(Array(deque) == ["b", "c", "d", "e"])
    #expect(deque.map { $0.uppercased() } == ["B", "C", "D", "E"])
    #expect(deque.count == 4)
    #expect(deque.first == "b")
  }

  // The mailbox's own checks, from when it was a chunked list of its own.

  private func message(_ n: Int) -> MachineMessage {
    MachineMessage(value: .table(LuaTable(array: ["m", .integer(Int64(n))])))!
  }

  private func number(_ message: MachineMessage?) -> Int64? {
    message?.value[2].integerValue
  }

  /// Enough messages to grow a mailbox several times.
  private let burst = 256

  @Test func messagesComeOutInOrderAcrossGrowth() {
    let mailbox = Deque<MachineMessage>()
    let total = burst * 3 + 7
    for n in 0..<total { mailbox.append(message(n)) }
    #expect(mailbox.count == total)
    var out: [Int64] = []
    while let next = mailbox.popFirst() { out.append(number(next)!) }
    #expect(out == (0..<total).map { Int64($0) })
    #expect(mailbox.isEmpty)
    #expect(mailbox.popFirst() == nil)
  }

  @Test func sendingWhileReadingKeepsTheOrder() {
    let mailbox = Deque<MachineMessage>()
    var sent = 0
    var read: [Int64] = []
    // Two in, one out, across several growths; then drain.
    for _ in 0..<(burst * 2) {
      mailbox.append(message(sent))
      mailbox.append(message(sent + 1))
      sent += 2
      read.append(number(mailbox.popFirst())!)
    }
    #expect(mailbox.count == sent - read.count)
    while let next = mailbox.popFirst() { read.append(number(next)!) }
    #expect(read == (0..<sent).map { Int64($0) })
    // Empty again: it takes new messages.
    mailbox.append(message(-1))
    #expect(number(mailbox.popFirst()) == -1)
  }

  @Test func removeAllEmptiesItForNewMessages() {
    let mailbox = Deque<MachineMessage>()
    for n in 0..<(burst + 1) { mailbox.append(message(n)) }
    #expect(number(mailbox.popFirst()) == 0)
    mailbox.removeAll()
    #expect(mailbox.count == 0)
    #expect(mailbox.popFirst() == nil)
    mailbox.append(message(1))
    mailbox.append(message(2))
    #expect(number(mailbox.popFirst()) == 1)
    #expect(mailbox.count == 1)
  }
}
