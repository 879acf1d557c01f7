import Glibc

/// Opens a store's SQLite file for `SQLiteRunStore` and `SQLiteQueueStore`,
/// which keep a connection each: checks it is a store (or nothing yet),
/// sets the connection up, migrates the schema and turns write-ahead
/// logging on.
enum SQLiteStoreFile {
  /// A connection to the store at `path`, created if it is missing or an
  /// empty file (unless `createIfMissing` is false: then a missing file or
  /// folder is a `.missing` error), migrated if it is older.
  /// - Throws: `StoreError` for a file that is not a Lunar store (left
  ///   untouched: nothing is opened), a store of a newer Lunar, or a
  ///   database failure.
  static func open(path: String, createIfMissing: Bool, options: SQLiteRunStore.Options) throws(StoreError)
    -> SQLiteDatabase
  {
    if options.readOnly, let reader = try openForReading(path: path, options: options) { return reader }
    let finding: StoreFileCheck.Finding
    do {
      finding = try StoreFileCheck.inspect(path)
    } catch where error.kind == .badLocation && !createIfMissing {
      // The folder is missing: with nothing to create, so is the store.
      throw StoreError(.missing, "no store at \(path)")
    }
    if finding != .lunarStore && !createIfMissing { throw StoreError(.missing, "no store at \(path)") }
    let db: SQLiteDatabase
    do {
      db = try SQLiteDatabase(path: path, flags: finding == .missing ? [.readWrite, .create] : [.readWrite])
      db.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
      try db.execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = \(options.durability.rawValue)")
    } catch {
      throw StoreError(error, path: path)
    }
    // The first migration commits in rollback-journal mode, so a new
    // store's application id is in the file itself, where StoreFileCheck
    // reads it, before any WAL file exists.
    try StoreSchema.migrate(db, path: path)
    try Self.useWriteAheadLog(db, path: path, timeoutMilliseconds: options.busyTimeoutMilliseconds)
    do {
      // A log that grew past this (one large transaction) is cut back to it
      // when it starts over.
      try db.execute("PRAGMA journal_size_limit = \(Self.journalSizeLimit)")
    } catch {
      throw StoreError(error, path: path)
    }
    db.keepWriteAheadLogSmall()
    return db
  }

  /// A read-only connection to the store at `path`, or nil when the store
  /// is not of this Lunar's version (the caller then opens it to migrate it,
  /// or to refuse it).
  ///
  /// A reader of a WAL database shares the log's index with the writers in
  /// the `-shm` file beside it, and makes it if it is missing. In a folder
  /// the reader may not write, with no `-shm` there, the store is read as
  /// immutable instead, which is right only while nobody writes it: it is
  /// done only when no `-wal` file is there either, that is when no
  /// connection has the store open (the last one to close removes both).
  /// - Throws: `.missing` when there is no store at `path`.
  private static func openForReading(path: String, options: SQLiteRunStore.Options) throws(StoreError) -> SQLiteDatabase? {
    let finding: StoreFileCheck.Finding
    do {
      finding = try StoreFileCheck.inspect(path)
    } catch where error.kind == .badLocation {
      throw StoreError(.missing, "no store at \(path)")
    }
    guard finding == .lunarStore else { throw StoreError(.missing, "no store at \(path)") }
    do {
      do throws(SQLiteError) {
        return try reader(path, flags: [.readOnly], options: options)
      } catch let error where error.isReadOnlyFailure && access(path + "-wal", F_OK) != 0 {
        return try reader(uri(path) + "?immutable=1", flags: [.readOnly, .uri], options: options)
      }
    } catch {
      throw StoreError(error, path: path)
    }
  }

  /// A read-only connection to `name` if it holds a current store (read at
  /// once, so that a failure to read shows here), else nil.
  private static func reader(_ name: String, flags: SQLiteDatabase.OpenFlags, options: SQLiteRunStore.Options)
    throws(SQLiteError) -> SQLiteDatabase?
  {
    let db = try SQLiteDatabase(path: name, flags: flags)
    db.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
    return try StoreSchema.isCurrent(db) ? db : nil
  }

  /// `path` as a `file:` URI: every byte but letters, digits, `/` and
  /// `-._~` percent-encoded.
  private static func uri(_ path: String) -> String {
    let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~".utf8)
    let digits = Array("0123456789ABCDEF".utf8)
    var bytes = Array("file:".utf8)
    for byte in path.utf8 {
      if plain.contains(byte) {
        bytes.append(byte)
      } else {
        bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The size, in bytes, the write-ahead log is cut back to: the 1,000
  /// pages of SQLite's own checkpoints.
  static let journalSizeLimit = 4 * 1024 * 1024

  /// Switches to WAL (a setting kept in the file) unless it is on already.
  /// The switch needs the database to itself; another process opening the
  /// store at the same moment makes it wait and try again.
  private static func useWriteAheadLog(_ db: SQLiteDatabase, path: String, timeoutMilliseconds: Int32) throws(StoreError) {
    var waited: Int32 = 0
    while true {
      do {
        if case .text(let mode) = try db.scalar("PRAGMA journal_mode"), mode == "wal" { return }
        if case .text(let mode) = try db.scalar("PRAGMA journal_mode = WAL"), mode == "wal" { return }
      } catch let error where error.isBusy && waited < timeoutMilliseconds {
        // Waited for below.
      } catch {
        throw StoreError(error, path: path)
      }
      guard waited < timeoutMilliseconds else {
        throw StoreError(.database, "store \(path): cannot switch to write-ahead logging: the store stayed busy")
      }
      usleep(10_000)
      waited += 10
    }
  }
}
