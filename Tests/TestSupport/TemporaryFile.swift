import Foundation

/// An empty file under the system's temporary folder, open for writing (a
/// child process's output goes there); removed when released.
public final class TemporaryFile {
  /// Where the file is.
  public let url: URL
  /// The file, open for writing.
  public let handle: FileHandle

  /// Creates the empty file.
  public init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    handle = try FileHandle(forWritingTo: url)
  }

  /// What the file holds, as UTF-8 text.
  public func contents() throws -> String {
    String(decoding: try Data(contentsOf: url), as: UTF8.self)
  }

  deinit {
    try? handle.close()
    try? FileManager.default.removeItem(at: url)
  }
}
