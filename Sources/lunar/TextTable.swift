/// Rows of cells as aligned columns, as the `lunar queue` listings print
/// them: two spaces between columns, chosen columns aligned on the right,
/// no trailing spaces.
struct TextTable {
  /// The first row.
  var headers: [String]
  /// The columns aligned on the right (numbers, durations), by index.
  var rightAligned: Set<Int> = []

  /// The lines of `rows` under the headers, each ending in a newline;
  /// `after` adds lines (not aligned) under the row of the same index.
  func text(_ rows: [[String]], after: (Int) -> String = { _ in "" }) -> String {
    let all = [headers] + rows
    let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
    var text = ""
    for (index, row) in all.enumerated() {
      let cells = row.enumerated().map { column, cell in
        let pad = String(repeating: " ", count: widths[column] - cell.count)
        return rightAligned.contains(column) ? pad + cell : cell + pad
      }
      var line = cells.joined(separator: "  ")
      while line.last == " " { line.removeLast() }
      text += line + "\n"
      if index > 0 { text += after(index - 1) }
    }
    return text
  }
}
