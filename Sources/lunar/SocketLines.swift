import Glibc
import Synchronization

/// Lines read from and written to one end of a socket pair: what `lunar
/// worker` and a warm run process say to each other. A write to a closed
/// peer fails (EPIPE) rather than raising SIGPIPE.
final class SocketLines: Sendable {
  /// The socket, closed with this value.
  let descriptor: Int32
  /// What was read past the last line returned; one reader at a time.
  private let pending = Mutex<[UInt8]>([])
  /// The longest line accepted: a request carries a run's arguments.
  static let maximumLine = 64 << 20

  /// Lines over `descriptor`, which this value closes.
  init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }

  /// The next line, without its newline; nil at the end of the stream,
  /// on an error or past `maximumLine`.
  func read() -> [UInt8]? {
    pending.withLock { buffer in
      var chunk = [UInt8](repeating: 0, count: 4096)
      while true {
        if let end = buffer.firstIndex(of: 0x0A) {
          let line = Array(buffer[..<end])
          buffer.removeSubrange(...end)
          return line
        }
        guard buffer.count <= Self.maximumLine else { return nil }
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return nil }
        buffer += chunk[..<count]
      }
    }
  }

  /// Writes `bytes` whole; false if the peer is gone.
  func write(_ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return false }
      offset += count
    }
    return true
  }
}
