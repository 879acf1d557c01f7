#if canImport(Glibc)
import Glibc
#endif

/// Reads the whole of a file Lunar reads on the user's behalf (a journal to
/// replay or resume, a local launch feed, `.busted`): regular files only,
/// and at most a bounded number of bytes. `/dev/zero`, a FIFO or a folder is
/// one clear error instead of a read that never ends or exhausts memory.
public enum BoundedFileReader {
  /// 64 MiB: far above any journal, feed or configuration Lunar reads.
  public static let defaultLimit = 64 << 20

  /// Why a file could not be read; its description is one line naming it.
  public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
      /// There is no such file.
      case missing
      /// Not a regular file: a device, a FIFO, a folder or a socket (named).
      case notRegular(String)
      /// Larger than the limit, in bytes.
      case tooLarge(limit: Int)
      /// Any other failure, as the system describes it.
      case system(String)
    }

    /// The path as given.
    public let path: String
    /// What went wrong.
    public let reason: Reason

    public var description: String {
      switch reason {
      case .missing: "cannot read \(path): No such file or directory"
      case .notRegular(let kind): "cannot read \(path): not a regular file (\(kind))"
      case .tooLarge(let limit): "cannot read \(path): larger than \(BoundedFileReader.size(limit))"
      case .system(let text): "cannot read \(path): \(text)"
      }
    }
  }

  /// The bytes of the regular file at `path`, at most `limit` of them.
  public static func read(_ path: String, limit: Int = defaultLimit) throws(ReadError) -> [UInt8] {
    // O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard descriptor >= 0 else {
      let code = errno
      throw ReadError(path: path, reason: code == ENOENT ? .missing : .system(String(cString: strerror(code))))
    }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      throw ReadError(path: path, reason: .system(String(cString: strerror(errno))))
    }
    if let kind = nonRegularKind(info.st_mode) { throw ReadError(path: path, reason: .notRegular(kind)) }
    guard info.st_size <= limit else { throw ReadError(path: path, reason: .tooLarge(limit: limit)) }
    // The size may change while reading (the file is growing): read to the
    // end, but never past the limit.
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
    var count = 0
    while true {
      if count == bytes.count {
        guard count <= limit else { throw ReadError(path: path, reason: .tooLarge(limit: limit)) }
        bytes += [UInt8](repeating: 0, count: min(max(bytes.count, 4096), limit + 1 - count))
      }
      let got = bytes.withUnsafeMutableBytes { buffer in
        Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
      }
      if got < 0 {
        if errno == EINTR { continue }
        throw ReadError(path: path, reason: .system(String(cString: strerror(errno))))
      }
      if got == 0 { break }
      count += got
    }
    guard count <= limit else { throw ReadError(path: path, reason: .tooLarge(limit: limit)) }
    bytes.removeSubrange(count...)
    return bytes
  }

  /// What a file that is not regular is ("a character device"), or nil for
  /// a regular file.
  static func nonRegularKind(_ mode: mode_t) -> String? {
    switch mode & S_IFMT {
    case S_IFREG: nil
    case S_IFDIR: "a folder"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFIFO: "a FIFO"
    case S_IFSOCK: "a socket"
    default: "not a file"
    }
  }

  /// `64 MiB`, `512 KiB`, `100 bytes`.
  static func size(_ bytes: Int) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
  }
}
