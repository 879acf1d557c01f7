import Foundation

/// This repository's folders, for tests that read its examples, fixtures
/// and docs wherever the test file itself sits.
public enum Repository {
  /// The repository's root folder.
  public static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// `relative`, a path from the repository's root.
  public static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}
