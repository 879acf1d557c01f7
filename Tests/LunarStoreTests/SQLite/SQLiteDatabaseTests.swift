import CSQLite
import Foundation
import Testing
import TestSupport

@testable import LunarStore

@Suite struct SQLiteDatabaseTests {
  @Test func valuesBindAndReadBackExactly() throws {
    let folder = try TemporaryFolder()
    let db = try SQLiteDatabase(path: folder.url.appendingPathComponent("t.db").path)
    try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
    let values: [SQLiteValue] = [
      .null, .integer(Int64.min), .integer(Int64.max), .real(-0.0), .real(.infinity), .real(1.5),
      .text(""), .text("é and e\u{301}"), .blob([]), .blob([0, 0xFF, 0xFE, 0]),
    ]
    for value in values { try db.run("INSERT INTO t (v) VALUES (?)", [value]) }
    var back: [SQLiteValue] = []
    try db.query("SELECT v FROM t ORDER BY id") { row in back.append(row.value(0)) }
    #expect(back == values)
    // An empty blob is a blob, not NULL; -0.0 keeps its sign.
    #expect(try db.scalar("SELECT typeof(v) FROM t WHERE id = 9") == .text("blob"))
    if case .real(let zero) = back[3] { #expect(zero.sign == .minus) }
  }

  @Test func errorsCarrySQLitesMessageAndTheStatement() throws {
    let folder = try TemporaryFolder()
    let db = try SQLiteDatabase(path: folder.url.appendingPathComponent("t.db").path)
    let error = #expect(throws: SQLiteError.self) { try db.run("SELECT * FROM nowhere WHERE x = ?", [1]) }
    #expect(error?.message == "no such table: nowhere")
    #expect(error?.statement == "SELECT * FROM nowhere WHERE x = ?")
    #expect(error?.description == "no such table: nowhere (SQLite error 1) in `SELECT * FROM nowhere WHERE x = ?`")
    try db.execute("CREATE TABLE u (k INTEGER PRIMARY KEY)")
    try db.run("INSERT INTO u VALUES (1)")
    let duplicate = #expect(throws: SQLiteError.self) { try db.run("INSERT INTO u VALUES (1)") }
    #expect(duplicate?.code == SQLITE_CONSTRAINT | 6 << 8)  // SQLITE_CONSTRAINT_PRIMARYKEY: extended codes
    #expect(duplicate?.message == "UNIQUE constraint failed: u.k")
    let missing = #expect(throws: SQLiteError.self) {
      try SQLiteDatabase(path: folder.url.appendingPathComponent("no/such/folder.db").path)
    }
    #expect(missing?.code == SQLITE_CANTOPEN)
  }

  @Test func aTransactionCommitsOrRollsBackAsAWhole() throws {
    let folder = try TemporaryFolder()
    let db = try SQLiteDatabase(path: folder.url.appendingPathComponent("t.db").path)
    try db.execute("CREATE TABLE t (v INTEGER)")
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try db.transaction {
        try db.run("INSERT INTO t VALUES (1)")
        throw Stop()
      }
    }
    #expect(db.isAutocommit)
    try db.transaction { try db.run("INSERT INTO t VALUES (2)") }
    #expect(try db.scalar("SELECT group_concat(v) FROM t") == .text("2"))
  }

  @Test func aWriterWaitsForAnotherOnesLockOrSaysItIsBusy() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("t.db").path
    let first = try SQLiteDatabase(path: path)
    try first.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER)")
    let second = try SQLiteDatabase(path: path)
    second.setBusyTimeout(milliseconds: 0)
    try first.execute("BEGIN IMMEDIATE")
    let busy = #expect(throws: SQLiteError.self) { try second.transaction { try second.run("INSERT INTO t VALUES (1)") } }
    #expect(busy?.isBusy == true)
    #expect(second.isAutocommit)
    // A reader is not blocked by the writer under WAL.
    #expect(try second.scalar("SELECT count(*) FROM t") == .integer(0))
    try first.execute("COMMIT")
    try second.transaction { try second.run("INSERT INTO t VALUES (1)") }
    #expect(try first.scalar("SELECT count(*) FROM t") == .integer(1))
  }
}
