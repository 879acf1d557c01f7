/// A line a script logs (a machine's `log` command, the services'
/// `log.info`/`warn`/`error`), written to standard error beside its trace
/// event.
enum LogLine {
  /// Writes `line` and a newline to standard error in one write; a failed
  /// write is dropped, as `print`'s is.
  static func write(_ line: String) {
    try? FileOutput(descriptor: 2).write(line + "\n")
  }
}
