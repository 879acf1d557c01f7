import Foundation

/// A fresh folder under the system's temporary folder, with the files a test
/// writes in it; removed with everything in it when released.
public final class TemporaryFolder {
  /// Where the folder is.
  public let url: URL

  /// Creates an empty folder.
  public init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// Writes `contents` to `name` (folders created) and returns its path.
  @discardableResult
  public func write(_ name: String, _ contents: String) throws -> String {
    let file = url.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(contents.utf8).write(to: file)
    return file.path
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}
