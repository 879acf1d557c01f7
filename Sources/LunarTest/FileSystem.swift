#if canImport(Glibc)
import Glibc
#endif

/// The little file-system access spec discovery needs, without Foundation.
public enum FileSystem {
  /// True if `path` is a directory.
  public static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
  }

  /// True if `path` exists.
  public static func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
  }

  /// The size in bytes of the file at `path`, if it exists.
  public static func size(_ path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
  }

  /// Every `.lua` file below `folder`, sorted, hidden entries skipped.
  static func luaFiles(under folder: String) -> [String] {
    var found: [String] = []
    guard let directory = opendir(folder) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if !name.hasPrefix(".") { names.append(name) }
    }
    for name in names.sorted() {
      let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
      if isDirectory(path) {
        found += luaFiles(under: path)
      } else if name.hasSuffix(".lua") {
        found.append(path)
      }
    }
    return found
  }

  /// The last component of `path`.
  static func baseName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
  }
}
