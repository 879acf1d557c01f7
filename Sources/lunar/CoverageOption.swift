import Lunar
import LunarTest

#if canImport(Glibc)
import Glibc
#endif

/// `lunar test --coverage` (or `--coverage-file FILE`): where the lcov file
/// goes, checked before the run so a path that cannot be written is refused
/// before the specs run, and written whole after it.
struct CoverageOption {
  /// Why the lcov file cannot be written; one line.
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  static let defaultFolder = "coverage"
  /// The lcov file, as given.
  let path: String
  /// The counts the runtimes add to.
  let coverage = LineCoverage()
  private let makesFolder: Bool

  /// The option `parsed` asks for, if any.
  init?(_ parsed: ParsedArguments) {
    if let file = parsed.value("coverage-file") {
      path = file
      makesFolder = false
    } else if parsed.has("coverage") {
      path = Self.defaultFolder + "/lcov.info"
      makesFolder = true
    } else {
      return nil
    }
  }

  /// Makes `coverage/` if missing; refuses a folder that cannot be written
  /// and a file that is not an lcov file Lunar wrote.
  func prepare() throws(Failure) {
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    if makesFolder && mkdir(folder, 0o755) != 0 && errno != EEXIST {
      throw Failure(description: "cannot create folder \(folder): \(String(cString: strerror(errno)))")
    }
    var info = stat()
    if stat(folder, &info) != 0 {
      throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      throw Failure(description: "cannot write \(path): \(folder) is not a folder")
    }
    guard access(folder, W_OK) == 0 else {
      throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
    do {
      try FileOutput.check(path, kind: LcovReport.kind)
    } catch {
      throw Failure(description: "\(error)")
    }
  }

  /// Writes the lcov file of the project's files, leaving out the specs
  /// (`specFiles`, and the folders among `specPaths`); returns the line
  /// that sums it up.
  func write(specFiles: [String], specPaths: [String]) throws(Failure) -> String {
    let scope = CoverageScope(root: ".", specFiles: specFiles, specFolders: specPaths.filter(FileSystem.isDirectory))
    let report = LcovReport(coverage, scope: scope)
    do {
      _ = try FileOutput(path: path, kind: LcovReport.kind, contents: report.bytes)
    } catch {
      throw Failure(description: "\(error)")
    }
    return report.summary(path: path)
  }
}
