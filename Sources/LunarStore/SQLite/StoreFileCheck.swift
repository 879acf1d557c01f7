import Glibc
import Synchronization

/// What a store file is, judged from its first 100 bytes before SQLite opens
/// it: SQLite creates WAL and journal files beside any file it opens read-write,
/// and Lunar leaves a file that is not its own exactly as it found it.
enum StoreFileCheck {
  /// Lunar's `PRAGMA application_id`: "LUNR".
  static let applicationID: Int32 = 0x4C55_4E52

  /// A file fit to be opened as a store.
  enum Finding: Equatable {
    /// Nothing at the path (its folder exists): a new store.
    case missing
    /// An empty regular file: a new store.
    case empty
    /// A SQLite database with Lunar's application id.
    case lunarStore
  }

  /// The descriptors inspections read store files through, by device and
  /// inode, never closed: closing any descriptor of a file drops every
  /// POSIX lock this process holds on it, SQLite's included, and another
  /// process would then take the store for unused, checkpoint its
  /// write-ahead log and delete it under this process's open connection
  /// (whose later commits would be lost). One descriptor per store file
  /// the process ever opens.
  private static let readers = Mutex<[FileKey: Int32]>([:])

  private struct FileKey: Hashable {
    var device: UInt64
    var inode: UInt64
  }

  /// What `path` is, or the error that refuses it.
  static func inspect(_ path: String) throws(StoreError) -> Finding {
    var known = stat()
    if stat(path, &known) == 0, known.st_mode & S_IFMT == S_IFREG,
      let fd = readers.withLock({ $0[FileKey(device: UInt64(known.st_dev), inode: UInt64(known.st_ino))] })
    {
      return try judge(path, fd: fd, size: Int(known.st_size))
    }
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
    if fd < 0 {
      let failure = errno
      if failure == ENOENT {
        let folder = parentFolder(of: path)
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
          throw StoreError(.badLocation, "cannot create store \(path): no such folder \(folder)")
        }
        return .missing
      }
      throw StoreError(.database, "cannot open store \(path): \(String(cString: strerror(failure)))")
    }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      let failure = errno
      close(fd)
      throw StoreError(.database, "cannot open store \(path): \(String(cString: strerror(failure)))")
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      // Not a file SQLite could hold open: closing it drops no lock.
      close(fd)
      let what = info.st_mode & S_IFMT == S_IFDIR ? "a folder" : "not a regular file"
      throw StoreError(.notAStore, "\(path) is \(what), not a Lunar store; Lunar leaves it untouched")
    }
    // Kept, never closed (see `readers`); one that raced another
    // inspection of the same file stays open too.
    let key = FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    readers.withLock { if $0[key] == nil { $0[key] = fd } }
    return try judge(path, fd: fd, size: Int(info.st_size))
  }

  /// What the regular file `path`, open as `fd` and `size` bytes long, is.
  private static func judge(_ path: String, fd: Int32, size: Int) throws(StoreError) -> Finding {
    if size == 0 { return .empty }
    var header = [UInt8](repeating: 0, count: 100)
    var filled = 0
    while filled < header.count {
      let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(filled)) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      filled += count
    }
    guard filled == header.count, header[0..<16].elementsEqual(Array("SQLite format 3\0".utf8)) else {
      throw StoreError(.notAStore, "\(path) is not a Lunar store (it is not a SQLite database); Lunar leaves it untouched")
    }
    let id = header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard Int32(bitPattern: id) == applicationID else {
      throw StoreError(
        .notAStore, "\(path) is not a Lunar store (it is a SQLite database of another application); Lunar leaves it untouched")
    }
    return .lunarStore
  }

  /// The folder that holds `path` ("." for a bare name).
  static func parentFolder(of path: String) -> String {
    guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
  }
}
