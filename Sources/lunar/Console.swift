#if canImport(Glibc)
import Glibc
#endif

/// Writes to the standard streams in order with what Lua's `print` and
/// `io.write` buffered in C stdio.
enum Console {
  /// Writes bytes to standard output as they are (Lua text need not be
  /// UTF-8), after flushing buffered output.
  static func output(_ bytes: [UInt8]) {
    fflush(nil)
    bytes.withUnsafeBufferPointer { writeAll($0, to: STDOUT_FILENO) }
  }

  /// Writes a line to standard error, after flushing buffered output.
  static func error(_ line: String) {
    fflush(nil)
    var text = line + "\n"
    text.withUTF8 { writeAll($0, to: STDERR_FILENO) }
  }

  private static func writeAll(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: Int32) {
    var offset = 0
    while offset < buffer.count {
      let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
      if written <= 0 { break }
      offset += written
    }
  }
}
