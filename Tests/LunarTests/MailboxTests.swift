import LuaKit
import Testing

@testable import Lunar

@Suite struct MailboxTests {
  private func message(_ n: Int) -> MachineMessage {
    MachineMessage(value: .table(LuaTable(array: ["m", .integer(Int64(n))])))!
  }

  private func number(_ message: MachineMessage?) -> Int64? {
    message?.value[2].integerValue
  }

  @Test func messagesComeOutInOrderAcrossChunks() {
    let mailbox = Mailbox()
    let total = Mailbox.chunkSize * 3 + 7
    for n in 0..<total { mailbox.append(message(n)) }
    #expect(mailbox.count == total)
    var out: [Int64] = []
    while let next = mailbox.removeFirst() { out.append(number(next)!) }
    #expect(out == (0..<total).map { Int64($0) })
    #expect(mailbox.isEmpty)
    #expect(mailbox.removeFirst() == nil)
  }

  @Test func sendingWhileReadingKeepsTheOrder() {
    let mailbox = Mailbox()
    var sent = 0
    var read: [Int64] = []
    // Two in, one out, across several chunk boundaries; then drain.
    for _ in 0..<(Mailbox.chunkSize * 2) {
      mailbox.append(message(sent))
      mailbox.append(message(sent + 1))
      sent += 2
      read.append(number(mailbox.removeFirst())!)
    }
    #expect(mailbox.count == sent - read.count)
    while let next = mailbox.removeFirst() { read.append(number(next)!) }
    #expect(read == (0..<sent).map { Int64($0) })
    // Empty again: it takes new messages from the start.
    mailbox.append(message(-1))
    #expect(number(mailbox.removeFirst()) == -1)
  }

  @Test func removeAllEmptiesItForNewMessages() {
    let mailbox = Mailbox()
    for n in 0..<(Mailbox.chunkSize + 1) { mailbox.append(message(n)) }
    #expect(number(mailbox.removeFirst()) == 0)
    mailbox.removeAll()
    #expect(mailbox.count == 0)
    #expect(mailbox.removeFirst() == nil)
    mailbox.append(message(1))
    mailbox.append(message(2))
    #expect(number(mailbox.removeFirst()) == 1)
    #expect(mailbox.count == 1)
  }
}
