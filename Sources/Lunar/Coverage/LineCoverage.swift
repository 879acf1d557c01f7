import CLuaShim
import LuaKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Line coverage gathered from every runtime made with it
/// (`RuntimeConfiguration.coverage`): each counts the lines its threads run
/// in the files `require`, `dofile` and `loadfile` load, and adds them here
/// as it closes. Runtimes on several threads share one.
public final class LineCoverage: Sendable {
  private let files = Mutex<[[UInt8]: CoveredFile]>([:])

  /// No files yet.
  public init() {}

  /// Every file counted so far, by path.
  public var coveredFiles: [CoveredFile] {
    files.withLock { $0.values.sorted { $0.path.lexicographicallyPrecedes($1.path) } }
  }

  /// Starts counting in `state` (its loop thread, before any script runs).
  static func start(in state: LuaState) throws(LuaError) {
    guard lunar_startcoverage(state.L) != 0 else { throw LuaError.notEnoughMemory }
  }

  /// Adds what `state` counted; on its loop thread, before it closes.
  func record(from state: LuaState) {
    var counted: [CoveredFile] = []
    for index in 0..<lunar_coveragefilecount(state.L) {
      var length = 0
      let source = lunar_coveragesource(state.L, index, &length)!
      let bytes = UnsafeRawBufferPointer(start: source, count: length)
      guard bytes.first == UInt8(ascii: "@") else { continue }
      var hits: UnsafePointer<UInt64>?
      var executable: UnsafePointer<UInt8>?
      let lines = Int(lunar_coveragelines(state.L, index, &hits, &executable))
      var lineHits: [Int: UInt64] = [:]
      for line in 0..<lines where executable![line] != 0 || hits![line] > 0 {
        lineHits[line] = hits![line]
      }
      counted.append(CoveredFile(path: Self.absolutePath(Array(bytes.dropFirst())), hits: lineHits))
    }
    files.withLock { files in
      for file in counted { files[file.path, default: CoveredFile(path: file.path, hits: [:])].add(file.hits) }
    }
  }

  /// The path a chunk was loaded from, made absolute with symbolic links
  /// and `..` resolved, so that `./a.lua` and `a.lua` are one file; a file
  /// gone since is joined to the current folder as it is.
  public static func absolutePath(_ path: [UInt8]) -> [UInt8] {
    let resolved: [UInt8]? = (path + [0]).withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { name in
        guard let real = realpath(name.baseAddress!, nil) else { return nil }
        defer { free(real) }
        return Array(UnsafeRawBufferPointer(start: real, count: strlen(real)))
      }
    }
    if let resolved { return resolved }
    if path.first == UInt8(ascii: "/") { return path }
    guard let folder = getcwd(nil, 0) else { return path }
    defer { free(folder) }
    return Array(UnsafeRawBufferPointer(start: folder, count: strlen(folder))) + [UInt8(ascii: "/")] + path
  }
}
