#if canImport(Glibc)
import Glibc
#endif

/// The folders `--sandbox` lets Lua source load from: the script's folder
/// (the current one for standard input) and the plugin path. A file is
/// inside when its path, resolved as the kernel would (the current folder,
/// `.`, `..` and symlinks), lies in one of them; the part of a path that
/// does not exist is resolved lexically, so the answer never depends on
/// whether a file outside exists. Paths are bytes, as Lua gives them, and
/// end at the first zero byte, where C's `fopen` stops reading them.
/// Lives on the loop thread.
final class SandboxFolders {
  private var roots: [[UInt8]] = []

  /// Allows `folder` and everything below it; a folder that does not
  /// exist allows nothing.
  func allow(_ folder: [UInt8]) {
    guard let root = Self.realPath(folder), !roots.contains(root) else { return }
    roots.append(root)
  }

  /// Allows the folder that holds the file at `path`.
  func allowFolder(of path: [UInt8]) {
    guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else {
      allow(Array(".".utf8))
      return
    }
    allow(slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash]))
  }

  /// Whether Lua source at `path` may be loaded.
  func allows(_ path: [UInt8]) -> Bool {
    guard let resolved = Self.resolve(path) else { return false }
    return roots.contains { root in
      root == [UInt8(ascii: "/")] || resolved == root
        || (resolved.starts(with: root) && resolved.count > root.count && resolved[root.count] == UInt8(ascii: "/"))
    }
  }

  /// Whether `resolved`, a path the kernel resolved (an open file's), lies
  /// in an allowed folder; nothing is resolved again.
  func contains(resolved: [UInt8]) -> Bool {
    roots.contains { root in
      root == [UInt8(ascii: "/")] || resolved == root
        || (resolved.starts(with: root) && resolved.count > root.count && resolved[root.count] == UInt8(ascii: "/"))
    }
  }

  /// Opens the Lua source file at `path` for reading if it is allowed,
  /// checking the file the descriptor leads to, not only the name: a
  /// symlink changed between the check and the open cannot let another
  /// file in. The descriptor, or the message to give (the refusal, or
  /// `cannot open PATH: REASON` for an allowed file that cannot be opened).
  func open(_ path: [UInt8]) -> Result<Int32, OpenRefusal> {
    guard allows(path) else { return .failure(OpenRefusal(message: Self.refusal(path))) }
    let name = Self.cString(path)
    let fd = (name + [0]).withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { Glibc.open($0.baseAddress!, O_RDONLY | O_CLOEXEC) }
    }
    guard fd >= 0 else {
      let reason = Array(String(cString: strerror(errno)).utf8)
      return .failure(OpenRefusal(message: Array("cannot open ".utf8) + name + Array(": ".utf8) + reason))
    }
    guard let opened = Self.realPath(Array("/proc/self/fd/\(fd)".utf8), link: true), contains(resolved: opened) else {
      close(fd)
      return .failure(OpenRefusal(message: Self.refusal(path)))
    }
    return .success(fd)
  }

  /// Why `open` gave no descriptor: the message, as bytes.
  struct OpenRefusal: Error {
    let message: [UInt8]
  }

  /// What loading `path` is refused with: the same words whether or not the
  /// file exists.
  static func refusal(_ path: [UInt8]) -> [UInt8] {
    Array("cannot open ".utf8) + cString(path) + Array(" (outside the sandbox)".utf8)
  }

  /// `package.searchpath` as Lua 5.4 does it (the first readable file of
  /// `templates` with `?` replaced by `name`, whose `separator`s become
  /// `replacement`), except that files outside the sandbox are never
  /// looked at: they are listed as not found, whether or not they exist.
  func searchPath(name: [UInt8], templates: [UInt8], separator: [UInt8], replacement: [UInt8]) -> (found: [UInt8]?, message: [UInt8]) {
    let name = separator.isEmpty ? name : Self.replacing(separator, with: replacement, in: name)
    var tried: [[UInt8]] = []
    for template in templates.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
      let file = Self.replacing([UInt8(ascii: "?")], with: name, in: Array(template))
      guard allows(file) else {
        tried.append(Array("no file '".utf8) + file + Array("' (outside the sandbox)".utf8))
        continue
      }
      if Self.isReadable(file) { return (file, []) }
      tried.append(Array("no file '".utf8) + file + Array("'".utf8))
    }
    return (nil, Array(tried.joined(separator: Array("\n\t".utf8))))
  }

  // MARK: Paths

  /// `path` made absolute and resolved: the longest part that exists by
  /// `realpath`, the rest lexically. Nil only if the current folder is gone.
  static func resolve(_ path: [UInt8]) -> [UInt8]? {
    var absolute = cString(path)
    if absolute.first != UInt8(ascii: "/") {
      guard let here = currentFolder() else { return nil }
      absolute = here + [UInt8(ascii: "/")] + absolute
    }
    var existing = absolute.split(separator: UInt8(ascii: "/")).map(Array.init)
    var missing: [[UInt8]] = []
    while true {
      let prefix = [UInt8(ascii: "/")] + Array(existing.joined(separator: [UInt8(ascii: "/")]))
      if let real = realPath(prefix) {
        var parts = real.split(separator: UInt8(ascii: "/")).map(Array.init)
        for part in missing.reversed() {
          if part == Array(".".utf8) { continue }
          if part == Array("..".utf8) {
            _ = parts.popLast()
          } else {
            parts.append(part)
          }
        }
        return [UInt8(ascii: "/")] + Array(parts.joined(separator: [UInt8(ascii: "/")]))
      }
      guard let last = existing.popLast() else { return nil }
      missing.append(last)
    }
  }

  /// The path `path` resolves to; with `link`, what the symlink at `path`
  /// names, as `/proc/self/fd/N` names the file open on N.
  private static func realPath(_ path: [UInt8], link: Bool = false) -> [UInt8]? {
    let text = cString(path) + [0]
    if link {
      return text.withUnsafeBufferPointer { buffer -> [UInt8]? in
        buffer.withMemoryRebound(to: CChar.self) { chars in
          var target = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
          guard let name = chars.baseAddress else { return nil }
          let count = target.withUnsafeMutableBufferPointer { bytes -> Int in
            guard let base = bytes.baseAddress else { return -1 }
            return readlink(name, base, Int(PATH_MAX))
          }
          return count > 0 ? Array(target[..<count]) : nil
        }
      }
    }
    return text.withUnsafeBufferPointer { buffer -> [UInt8]? in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        guard let resolved = realpath(chars.baseAddress, nil) else { return nil }
        defer { free(resolved) }
        return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
      }
    }
  }

  private static func currentFolder() -> [UInt8]? {
    guard let folder = getcwd(nil, 0) else { return nil }
    defer { free(folder) }
    return Array(UnsafeRawBufferPointer(start: folder, count: strlen(folder)))
  }

  private static func isReadable(_ path: [UInt8]) -> Bool {
    let text = path + [0]
    return text.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        guard let file = fopen(chars.baseAddress, "r") else { return false }
        fclose(file)
        return true
      }
    }
  }

  /// The bytes before the first zero byte.
  static func cString(_ bytes: [UInt8]) -> [UInt8] {
    Array(bytes.prefix { $0 != 0 })
  }

  /// `bytes` with every `pattern` replaced by `replacement`, as `luaL_gsub`.
  private static func replacing(_ pattern: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) -> [UInt8] {
    guard !pattern.isEmpty else { return bytes }
    var result: [UInt8] = []
    var index = 0
    while index < bytes.count {
      if bytes[index...].starts(with: pattern) {
        result += replacement
        index += pattern.count
      } else {
        result.append(bytes[index])
        index += 1
      }
    }
    return result
  }
}
