/// How a user names a run on the command line: `last` or its id.
public enum RunReference: Sendable, Equatable {
  /// The newest run (of the workflow, where one is given).
  case last
  /// The run with this id.
  case id(RunID)

  /// Reads `text`: `last` or a positive number.
  public init(parsing text: String) throws(StoreError) {
    if text == "last" {
      self = .last
    } else if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(text), number > 0 {
      self = .id(RunID(number))
    } else {
      throw StoreError(.badReference, "a run is 'last' or a run id (a positive number), got '\(text)'")
    }
  }
}
