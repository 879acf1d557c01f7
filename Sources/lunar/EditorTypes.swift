import Lunar

/// The files `lunar types` writes into a project folder, embedded in the
/// binary: Lunar's Lua API as lua-language-server annotations under
/// `.lunar/types` (sources in `Sources/lunar/Types`), a `.luarc.json` that
/// points the language server at them, and a `.luacheckrc` with luacheck's
/// standard for Lunar. Each begins with Lunar's mark, so `lunar types`
/// replaces only files it wrote.
enum EditorTypes {
  /// One file to write: where, relative to the project folder, and what.
  struct File {
    let path: String
    let contents: [UInt8]
    let kind: FileOutput.Kind
  }

  /// The folder of the annotations, relative to the project folder.
  static let folder = ".lunar/types"

  /// The mark every annotation file carries on its second line.
  private static let mark = Array("\n-- Written by `lunar types`".utf8)

  /// Every file, annotations first.
  static let files: [File] =
    [
      ("lunar.lua", PackageResources.lunar_lua), ("lunar/queue.lua", PackageResources.queue_lua),
      ("lunar/machine.lua", PackageResources.machine_lua), ("lunar/actions.lua", PackageResources.actions_lua),
      ("lunar/workflow.lua", PackageResources.workflow_lua), ("lunar/trace.lua", PackageResources.trace_lua),
      ("lunar/launches.lua", PackageResources.launches_lua), ("lunar/repl.lua", PackageResources.repl_lua),
    ].map { File(path: folder + "/" + $0.0, contents: $0.1, kind: annotations) }
    + [
      File(
        path: ".luarc.json", contents: PackageResources.luarc_json,
        kind: .starting(with: ["{\n  \"$comment\": \"Written by `lunar types`"], name: "a .luarc.json written by lunar types")),
      File(
        path: ".luacheckrc", contents: PackageResources.luacheckrc_lua,
        kind: .starting(with: ["-- Written by `lunar types`"], name: "a .luacheckrc written by lunar types")),
    ]

  /// Annotation files: `---@meta NAME` first, the mark on the next line.
  private static let annotations = FileOutput.Kind("Lunar's annotations (written by lunar types)") { head, _ in
    guard head.starts(with: Array("---@meta ".utf8)), let end = head.firstIndex(of: UInt8(ascii: "\n")) else { return false }
    return head[end...].starts(with: mark)
  }
}
