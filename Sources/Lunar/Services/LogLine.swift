/// A line a script logs (a machine's `log` command, the services'
/// `log.info`/`warn`/`error`), written to standard error beside its trace
/// event.
enum LogLine {
  /// Writes `line` and a newline to standard error in one write; a failed
  /// write is dropped, as `print`'s is.
  static func write(_ line: String) {
    write(bytes: Array(line.utf8))
  }

  /// Writes `bytes` and a newline to standard error in one write.
  static func write(bytes: [UInt8]) {
    try? FileOutput(descriptor: 2).write(bytes: bytes + [UInt8(ascii: "\n")])
  }
}
