import LuaKit
import Testing

@testable import LunarStore

/// Queues as a store of version 2 (before heads were marked) held them, and
/// what a claim must make of them once migrated.
enum QueueMigrationFixture {
  /// Queue `a`: job 1 succeeded, job 2 running under a lease that ended at
  /// 5 µs, job 3 waiting. Queue `b`: job 4 cancelled, jobs 5 and 6 waiting.
  /// Names and inputs are blobs written `X'..'`.
  static let versionTwoJobs = """
    INSERT INTO queue (name, last_sequence) VALUES (X'61', 3), (X'62', 3);
    INSERT INTO job (queue, sequence, action, input, policy, status, attempts, claim, worker, enqueued_at, lease_expires_at)
    VALUES (X'61', 1, X'6163', X'', 'continue', 'succeeded', 1, 1, 'w', 1, NULL),
           (X'61', 2, X'6163', X'', 'continue', 'running', 1, 2, 'w', 2, 5),
           (X'61', 3, X'6163', X'', 'continue', 'waiting', 0, NULL, NULL, 3, NULL),
           (X'62', 1, X'6163', X'', 'continue', 'cancelled', 0, NULL, NULL, 4, NULL),
           (X'62', 2, X'6163', X'', 'continue', 'waiting', 0, NULL, NULL, 5, NULL),
           (X'62', 3, X'6163', X'', 'continue', 'waiting', 0, NULL, NULL, 6, NULL);
    """

  /// Claims from the migrated `store` come in the order the old one's did.
  static func checkHeads(_ store: any QueueStore) throws {
    let worker = WorkerID("w2")
    let clock = StoreTimestamp(microseconds: 10)
    // The running job whose lease expired is the oldest head; then b's
    // first unfinished job; a's third and b's third wait behind them.
    let expired = try #require(try store.claim(worker: worker, queues: nil, lease: .seconds(10), at: clock))
    #expect(expired.id == JobID(2) && expired.attempt == 2)
    let next = try #require(try store.claim(worker: worker, queues: nil, lease: .seconds(10), at: clock))
    #expect(next.id == JobID(5))
    #expect(try store.claim(worker: worker, queues: nil, lease: .seconds(10), at: clock) == nil)
    try store.complete(job: expired.id, token: expired.token, outcome: .succeeded(output: []), at: clock)
    #expect(try store.claim(worker: worker, queues: nil, lease: .seconds(10), at: clock)?.id == JobID(3))
  }
}
