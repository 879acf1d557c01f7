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
    state.withStackScope {
      state.getGlobal("package")
      guard state.type(at: -1) == .table else { return }
      state.pushField("path", of: -1)
      let current = state.string(at: -1) ?? ""
      state.pop()
      state.push(prefix + current)
      state.setField("path", of: -2)
    }
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
    state.withStackScope {
      state.getGlobal("package")
      guard state.type(at: -1) == .table else { return }
      state.pushField("path", of: -1)
      let current = state.string(at: -1) ?? ""
      state.pop()
      // Only while the path is still Lunar's own (LUA_INIT has not run).
      guard current.hasPrefix(pluginPathPrefix), !current.contains(templates) else { return }
      if let sandboxFolders { sandboxFolders.allow(Array(folder.utf8)) }
      state.push(pluginPathPrefix + templates + current.dropFirst(pluginPathPrefix.count))
      state.setField("path", of: -2)
    }
  }
}
