import Lunar

/// Which of the files the specs loaded a coverage report counts: the
/// project's own, those under the project's folder, but not the specs
/// (the spec files, and every file in a folder of specs given to
/// `lunar test` other than the project's own folder: `spec/` holds their
/// helpers) and not libraries installed in a Lua tree (`share/lua/` or
/// `lib/lua/`: Debian's `/usr/share/lua`, a LuaRocks tree such as
/// `lua_modules/`).
public struct CoverageScope: Sendable {
  /// The project's folder, absolute, without a trailing `/`.
  public let root: [UInt8]
  /// Absolute paths of the spec files.
  public let specFiles: Set<[UInt8]>
  /// Folders of specs inside the project, absolute, each ending in `/`.
  public let specFolders: [[UInt8]]

  /// The files under `root` (the current folder for `lunar test`) but not
  /// `specFiles` nor those in `specFolders` below `root` (paths as given).
  public init(root: String, specFiles: [String], specFolders: [String] = []) {
    let root = Self.folder(root)
    self.root = root.count > 1 ? Array(root.dropLast()) : root
    self.specFiles = Set(specFiles.map { LineCoverage.absolutePath(Array($0.utf8)) })
    self.specFolders = specFolders.map(Self.folder).filter { $0.count > root.count && $0.starts(with: root) }
  }

  /// True if the file at absolute `path` is counted.
  public func includes(_ path: [UInt8]) -> Bool {
    let folder = root == [UInt8(ascii: "/")] ? root : root + [UInt8(ascii: "/")]
    guard path.starts(with: folder), !specFiles.contains(path) else { return false }
    if specFolders.contains(where: { path.starts(with: $0) }) { return false }
    let inside = [UInt8(ascii: "/")] + path[folder.count...]
    return !Self.libraryFolders.contains { Self.contains(inside, $0) }
  }

  /// `path` made absolute, ending in one `/`.
  private static func folder(_ path: String) -> [UInt8] {
    var folder = LineCoverage.absolutePath(Array(path.utf8))
    while folder.last == UInt8(ascii: "/") { folder.removeLast() }
    return folder + [UInt8(ascii: "/")]
  }

  private static let libraryFolders = ["/share/lua/", "/lib/lua/"].map { Array($0.utf8) }

  private static func contains(_ path: [UInt8], _ part: [UInt8]) -> Bool {
    guard path.count >= part.count else { return false }
    return (0...(path.count - part.count)).contains { path[$0..<$0 + part.count].elementsEqual(part) }
  }
}
