import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An output file shared by threads: each `write` goes out whole, in one
/// system call where possible.
///
/// A file Lunar writes at a path is never truncated in place, and a file
/// that is not Lunar's is never overwritten: an existing regular file is
/// replaced only when it is empty or begins as Lunar's own file of that kind
/// does, and then by a new file renamed over it (so a hard link or a reader
/// of the old one keeps its contents). A FIFO or a device (`/dev/stderr`) is
/// written as the stream it is. A failed write is an error, and every later
/// write fails the same way.
public final class FileOutput: Sendable {
  /// Why a file could not be opened or first written, or was refused.
  public struct OpenError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    /// What failed: `open`, or `write` for the first contents.
    let action: String

    init(path: String, reason: String, action: String = "open") {
      self.path = path
      self.reason = reason
      self.action = action
    }

    public var description: String { "cannot \(action) \(path): \(reason)" }
  }

  /// Why a write failed (`No space left on device`).
  public struct WriteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as given (or `standard error`).
    public let path: String
    public let reason: String
    public var description: String { "cannot write \(path): \(reason)" }
  }

  /// What Lunar writes at a path, recognised by how its files look, so that
  /// only a file of this kind is ever replaced.
  public struct Kind: Sendable {
    /// Says what the file should be, for the refusal: `a Lunar journal`.
    public let name: String
    /// Whether an existing file is of this kind, from its first and last
    /// bytes (up to 4 KiB each).
    public let recognizes: @Sendable (_ head: [UInt8], _ tail: [UInt8]) -> Bool

    /// A kind recognised by `recognizes`.
    public init(_ name: String, recognizes: @escaping @Sendable (_ head: [UInt8], _ tail: [UInt8]) -> Bool) {
      self.name = name
      self.recognizes = recognizes
    }

    /// A kind whose files begin with one of `prefixes`.
    public static func starting(with prefixes: [String], name: String) -> Kind {
      let prefixes = prefixes.map { Array($0.utf8) }
      return Kind(name) { head, _ in prefixes.contains { head.starts(with: $0) } }
    }
  }

  private let descriptor: Int32
  private let owned: Bool
  private let name: String
  private struct Failure {
    var error: WriteError?
    var handlers: [@Sendable (WriteError) -> Void] = []
  }
  private let failure = Mutex(Failure())
  private static let temporaryCount = Atomic<Int>(0)

  /// Writes to an already-open descriptor (not closed by this object).
  public init(descriptor: Int32) {
    self.descriptor = descriptor
    self.owned = false
    self.name = descriptor == 1 ? "standard output" : descriptor == 2 ? "standard error" : "descriptor \(descriptor)"
  }

  /// Opens `path` for a new file of `kind` that begins with `contents`: a
  /// missing file is created, an existing regular file replaced only if it
  /// is empty or of `kind`, a FIFO or device written as a stream.
  public init(path: String, kind: Kind, contents: [UInt8] = []) throws(OpenError) {
    name = path
    owned = true
    switch try Self.target(path, kind: kind) {
    case .replaceable:
      descriptor = try Self.replace(path, with: contents)
    case .stream:
      let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
      guard fd >= 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
      descriptor = fd
      if let error = Self.writeAll(fd, contents) {
        close(fd)
        throw OpenError(path: path, reason: error, action: "write")
      }
    }
  }

  /// Throws the error `init(path:kind:)` would for `path`, without writing
  /// anything: to refuse a file before a long run rather than after it.
  public static func check(_ path: String, kind: Kind) throws(OpenError) {
    _ = try target(path, kind: kind)
  }

  /// Writes `text` as UTF-8; a failure (a full disk) is thrown now and by
  /// every later write, and reported once to the `whenWriteFails` handlers.
  public func write(_ text: String) throws(WriteError) {
    var text = text
    if let error = text.withUTF8({ buffer in failed(writing: UnsafeRawBufferPointer(buffer)) }) { throw error }
  }

  /// Writes `bytes` in one piece, failing as `write(_:)` for text does.
  public func write(bytes: [UInt8]) throws(WriteError) {
    if let error = bytes.withUnsafeBytes({ buffer in failed(writing: buffer) }) { throw error }
  }

  /// Writes `buffer`; nil, or the error this write or an earlier one met.
  private func failed(writing buffer: UnsafeRawBufferPointer) -> WriteError? {
    if let error = failure.withLock({ $0.error }) { return error }
    guard let problem = Self.writeAll(descriptor, buffer) else { return nil }
    let error = WriteError(path: name, reason: problem)
    let handlers = failure.withLock { state -> [@Sendable (WriteError) -> Void] in
      guard state.error == nil else { return [] }
      state.error = error
      return state.handlers
    }
    for handler in handlers { handler(error) }
    return error
  }

  /// Calls `handler` (on the writing thread) when a write first fails, or
  /// at once if one has failed already.
  public func whenWriteFails(_ handler: @escaping @Sendable (WriteError) -> Void) {
    let failed = failure.withLock { state -> WriteError? in
      if state.error == nil { state.handlers.append(handler) }
      return state.error
    }
    if let failed { handler(failed) }
  }

  deinit {
    if owned { close(descriptor) }
  }

  // MARK: Opening

  /// How a path is written.
  private enum Target {
    /// Missing, or a regular file that is empty or of the kind: replaced.
    case replaceable
    /// A FIFO or a device: written as it is.
    case stream
  }

  private static func target(_ path: String, kind: Kind) throws(OpenError) -> Target {
    var info = stat()
    guard stat(path, &info) == 0 else {
      if errno == ENOENT { return .replaceable }
      throw OpenError(path: path, reason: String(cString: strerror(errno)))
    }
    switch info.st_mode & S_IFMT {
    case S_IFREG:
      if info.st_size > 0 {
        let (head, tail) = try sample(path)
        guard kind.recognizes(head, tail) else {
          throw OpenError(path: path, reason: "it exists and is not \(kind.name); Lunar never overwrites it (remove it or choose another file)")
        }
      }
      return .replaceable
    case S_IFDIR:
      throw OpenError(path: path, reason: "it is a folder")
    default:
      return .stream
    }
  }

  /// Writes `contents` to a new file beside `path` and renames it over
  /// `path`; returns the new file's descriptor, open for writing at its end.
  private static func replace(_ path: String, with contents: [UInt8]) throws(OpenError) -> Int32 {
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { String(path[...$0]) } ?? ""
    let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let number = temporaryCount.add(1, ordering: .relaxed).newValue
    let temporary = "\(folder).\(base).lunar-\(getpid())-\(number)"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
    if let error = writeAll(fd, contents) {
      close(fd)
      unlink(temporary)
      throw OpenError(path: path, reason: error, action: "write")
    }
    guard rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      close(fd)
      unlink(temporary)
      throw OpenError(path: path, reason: reason)
    }
    return fd
  }

  /// The first and last 4 KiB of the regular file at `path`.
  private static func sample(_ path: String) throws(OpenError) -> (head: [UInt8], tail: [UInt8]) {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard fd >= 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
    func read(at offset: Int, count: Int) -> [UInt8] {
      var bytes = [UInt8](repeating: 0, count: count)
      let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
      return Array(bytes.prefix(max(0, got)))
    }
    let size = Int(info.st_size)
    let window = 4096
    return (read(at: 0, count: min(size, window)), read(at: max(0, size - window), count: min(size, window)))
  }

  /// Writes every byte of `bytes`; nil, or why it stopped.
  private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
    bytes.withUnsafeBytes { writeAll(fd, $0) }
  }

  private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> String? {
    var offset = 0
    while offset < buffer.count {
      let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return String(cString: strerror(errno))
      }
      if written == 0 { return "the file accepts no more data" }
      offset += written
    }
    return nil
  }
}
