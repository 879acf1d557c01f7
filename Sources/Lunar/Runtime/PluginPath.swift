import LuaKit

/// Where `require` finds plugins, and, under `--sandbox`, the folders Lua
/// source may be loaded from. The plugin folders (`--plugin-dir`,
/// `LUNAR_PATH`, `./plugins`) go in front of `package.path` when the
/// runtime is made; a script's own folder, and the `plugins` folder beside
/// a script file, join them when the script runs. Loop thread only.
final class PluginPath {
  private let state: LuaState
  /// Where `--sandbox` loads Lua source from (nil without the sandbox).
  private var sandboxFolders: SandboxFolders?

  /// Sets up the plugin path in `state` and, if `configuration` asks for
  /// it, the sandbox, whose folders are the plugin folders until scripts
  /// add their own.
  init(state: LuaState, configuration: RuntimeConfiguration) throws(LuaError) {
    self.state = state
    let pluginFolders = setUpPackagePath(configuration)
    if configuration.sandbox {
      let folders = SandboxFolders()
      for folder in pluginFolders { folders.allow(Array(folder.utf8)) }
      try Sandbox.apply(to: state, folders: folders)
      sandboxFolders = folders
    }
  }

  /// Lets `script` load what it needs: under the sandbox, source from its
  /// own folder (the current one for standard input and text); and the
  /// plugins shipped beside a script file.
  func prepare(for script: Script) {
    if let sandboxFolders {
      // The script's own folder; standard input and text come from here.
      if case .file(let path) = script.source {
        sandboxFolders.allowFolder(of: Array(path.utf8))
      } else {
        sandboxFolders.allow(Array(".".utf8))
      }
    }
    if case .file(let path) = script.source { addPluginFolder(besideScript: path) }
  }

  /// Puts plugin folders in front of `package.path`: `--plugin-dir`
  /// folders, then `LUNAR_PATH` (`;`-separated), then `./plugins`; returns
  /// those folders. (`plugins` beside a script file follows, once the
  /// script is known: `addPluginFolder(besideScript:)`.)
  private func setUpPackagePath(_ configuration: RuntimeConfiguration) -> [String] {
    var folders = configuration.pluginDirectories
    if let extra = configuration.environment["LUNAR_PATH"] {
      folders += extra.split(separator: ";").map(String.init).filter { !$0.isEmpty }
    }
    folders.append("./plugins")
    var prefix = ""
    for folder in folders { prefix += Self.pluginTemplates(folder) }
    pluginPathPrefix = prefix
    updatePackagePath { current in prefix + current }
    return folders
  }

  /// The plugin folders' part at the front of `package.path`.
  private var pluginPathPrefix = ""

  /// `DIR/?.lua;DIR/?/init.lua;`: where a plugin folder's modules are.
  private static func pluginTemplates(_ folder: String) -> String {
    folder + "/?.lua;" + folder + "/?/init.lua;"
  }

  /// Adds the `plugins` folder beside the script file at `path` to the
  /// plugin path, after the others, so a workflow finds the plugins it
  /// ships with wherever it is run from (`./plugins` already covers a
  /// script in the current folder).
  private func addPluginFolder(besideScript path: String) {
    guard let slash = path.lastIndex(of: "/") else { return }
    let folder = (slash == path.startIndex ? "" : String(path[..<slash])) + "/plugins"
    let templates = Self.pluginTemplates(folder)
    updatePackagePath { current in
      // Only while the path is still Lunar's own (LUA_INIT has not run).
      guard current.utf8.starts(with: pluginPathPrefix.utf8), !Self.bytes(of: current, hold: templates) else { return nil }
      if let sandboxFolders { sandboxFolders.allow(Array(folder.utf8)) }
      let rest = current.utf8.dropFirst(pluginPathPrefix.utf8.count)
      return pluginPathPrefix + templates + String(decoding: rest, as: UTF8.self)
    }
  }

  /// Whether `path` holds `part`, compared byte for byte: paths are bytes,
  /// and `String.contains` would match canonically equivalent names too.
  private static func bytes(of path: String, hold part: String) -> Bool {
    let haystack = Array(path.utf8)
    let needle = Array(part.utf8)
    guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<start + needle.count].elementsEqual(needle) {
      return true
    }
    return false
  }

  /// Sets `package.path` to what `change` makes of it; nil leaves it.
  private func updatePackagePath(_ change: (String) -> String?) {
    state.withStackScope {
      state.getGlobal("package")
      guard state.type(at: -1) == .table else { return }
      state.pushField("path", of: -1)
      let current = state.string(at: -1) ?? ""
      state.pop()
      guard let changed = change(current) else { return }
      state.push(changed)
      state.setField("path", of: -2)
    }
  }
}
