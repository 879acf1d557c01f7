import LunarStore

/// The list `lunar runs` prints: one row per run, newest first, with its
/// status, start, duration and the counts of its steps by how they ended.
enum RunTable {
  private static let headers = [
    "id", "workflow", "status", "started", "duration", "succeeded", "failed", "skipped", "reused",
  ]
  /// Columns aligned on the right: numbers and durations.
  private static let rightAligned: Set<Int> = [0, 4, 5, 6, 7, 8]

  /// The table of `summaries`, in their order, each line ending in a newline.
  static func text(_ summaries: [RunSummary]) -> String {
    let rows =
      [headers]
      + summaries.map { summary in
        let run = summary.run
        return [
          run.id.description, RunText.name(run.workflow), RunText.status(of: run), RunText.localTime(run.startedAt),
          RunText.duration(of: run), String(summary.succeeded), String(summary.failed), String(summary.skipped),
          String(summary.reused),
        ]
      }
    let widths = headers.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    var text = ""
    for row in rows {
      let cells = row.enumerated().map { column, cell in
        let pad = String(repeating: " ", count: widths[column] - cell.count)
        return rightAligned.contains(column) ? pad + cell : cell + pad
      }
      text += trimmingTrailingSpaces(cells.joined(separator: "  ")) + "\n"
    }
    return text
  }

  private static func trimmingTrailingSpaces(_ line: String) -> String {
    var line = line
    while line.last == " " { line.removeLast() }
    return line
  }
}
