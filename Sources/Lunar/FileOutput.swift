#if canImport(Glibc)
import Glibc
#endif

/// An append-only output file descriptor shared by threads: each `write`
/// goes out whole, in one system call where possible.
public final class FileOutput: Sendable {
  /// Why a file could not be opened.
  public struct OpenError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot open \(path): \(reason)" }
  }

  private let descriptor: Int32
  private let owned: Bool

  /// Writes to an already-open descriptor (not closed by this object).
  public init(descriptor: Int32) {
    self.descriptor = descriptor
    self.owned = false
  }

  /// Creates or truncates the file at `path`.
  public init(path: String) throws(OpenError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
    descriptor = fd
    owned = true
  }

  /// Writes `text` as UTF-8.
  public func write(_ text: String) {
    var text = text
    text.withUTF8 { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return }
        offset += written
      }
    }
  }

  deinit {
    if owned { close(descriptor) }
  }
}
