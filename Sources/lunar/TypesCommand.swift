import Lunar

#if canImport(Glibc)
import Glibc
#endif

/// `lunar types [DIR]`: sets a project folder up for editors and linting by
/// writing `EditorTypes.files` into it: the annotations, `.luarc.json` and
/// `.luacheckrc`. Every file is checked before any is written, so a file
/// that is not Lunar's leaves the folder as it was.
enum TypesCommand {
  static let spec = CommandSpec(
    name: "types",
    summary: "Write editor types for lua-language-server and luacheck's standard into DIR (default: the current folder).",
    operands: "[DIR]",
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard parsed.operands.count <= 1 else {
      return LunarCommandLine.usageFailure(
        UsageError(message: "types takes one DIR, got \(parsed.operands.count) operands", command: "types"))
    }
    let given = parsed.operands.first ?? "."
    guard !given.isEmpty else {
      return LunarCommandLine.usageFailure(UsageError(message: "DIR is an empty string", command: "types"))
    }
    var info = stat()
    if stat(given, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR {
      return LunarCommandLine.usageFailure(UsageError(message: "'\(given)' is not a folder", command: "types"))
    }
    // Paths relative to DIR, as messages show them: `.luarc.json` here.
    let project = given == "." ? "" : given.hasSuffix("/") ? given : given + "/"
    var refused: [String] = []
    for file in EditorTypes.files {
      do {
        try FileOutput.check(project + file.path, kind: file.kind)
      } catch {
        refused.append(file.path)
        Console.error("lunar: \(error)")
      }
    }
    if !refused.isEmpty {
      if refused.contains(".luarc.json") {
        Console.error(
          "lunar: to keep your .luarc.json, add \"\(EditorTypes.folder)\" to its workspace.library (or run lunar types in another folder)")
      }
      if refused.contains(".luacheckrc") {
        Console.error("lunar: to keep your .luacheckrc, copy stds.lunar into it from one lunar types writes in another folder")
      }
      Console.error("lunar: nothing was written")
      return 1
    }
    do {
      for file in EditorTypes.files {
        try createFolders(project, for: file.path)
        _ = try FileOutput(path: project + file.path, kind: file.kind, contents: file.contents)
      }
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    let annotations = EditorTypes.files.filter { $0.path.hasPrefix(EditorTypes.folder + "/") }.count
    print("wrote \(EditorTypes.folder)/ (\(annotations) files), .luarc.json and .luacheckrc in \(given)")
    return 0
  }

  /// Why a folder could not be made.
  struct FolderError: Error, CustomStringConvertible {
    let folder: String
    let reason: String
    var description: String { "cannot create folder \(folder): \(reason)" }
  }

  /// Creates `project` and each missing folder of `path` (relative to it).
  private static func createFolders(_ project: String, for path: String) throws(FolderError) {
    var folder = project.hasPrefix("/") ? "/" : ""
    let components = (project + path).split(separator: "/").dropLast()
    for component in components {
      folder += component + "/"
      if mkdir(folder, 0o755) != 0 && errno != EEXIST {
        throw FolderError(folder: String(folder.dropLast()), reason: String(cString: strerror(errno)))
      }
      var info = stat()
      if stat(folder, &info) != 0 || info.st_mode & S_IFMT != S_IFDIR {
        throw FolderError(folder: String(folder.dropLast()), reason: "it exists and is not a folder")
      }
    }
  }
}
