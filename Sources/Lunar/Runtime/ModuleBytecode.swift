import LuaKit
import Synchronization

/// The compiled form of plugins' Lua sources, kept for the life of the
/// process: a source that a second runtime loads is compiled once more and
/// kept as bytecode (with its debug information, so messages and
/// tracebacks read the same), and every later runtime loads the bytecode
/// instead of parsing the source. A process with one runtime (`lunar run`)
/// only notes what it loaded, so its start-up pays nothing; one that makes
/// many (a warm `lunar run --host-runs` process, `lunar test`) stops
/// paying to parse `lunar.workflow` and its neighbours each time.
enum ModuleBytecode {
  private enum State {
    /// Loaded once, from source.
    case seen
    /// Compiled and dumped.
    case compiled([UInt8])
  }

  /// What is known of the source a chunk name was loaded from. Entries
  /// are found by name and their sources compared: hashing each source
  /// (`lunar.workflow`'s is 40 KB) cost a start-up a million instructions,
  /// where comparing equal sources is a memcmp.
  private struct Entry {
    let source: [UInt8]
    var state: State
  }

  private static let entries = Mutex<[String: [Entry]]>([:])

  /// Pushes `source`, named `chunkName`, as a function on `state`'s stack,
  /// compiled from source or loaded from its kept bytecode.
  static func load(_ source: [UInt8], chunkName: String, on state: LuaState) throws(LuaError) {
    let known = entries.withLock { entries -> State? in
      if let entry = entries[chunkName]?.first(where: { $0.source == source }) { return entry.state }
      entries[chunkName, default: []].append(Entry(source: source, state: .seen))
      return nil
    }
    if case .compiled(let bytecode)? = known {
      try state.load(bytes: bytecode, name: chunkName, mode: .binary)
      return
    }
    try state.load(bytes: source, name: chunkName, mode: .text)
    if case .seen? = known {
      let bytecode = state.dump(strip: false)
      entries.withLock { entries in
        guard let index = entries[chunkName]?.firstIndex(where: { $0.source == source }) else { return }
        entries[chunkName]?[index].state = .compiled(bytecode)
      }
    }
  }

  /// Whether `source`, named `chunkName`, is kept as bytecode by now.
  static func isCompiled(_ source: [UInt8], chunkName: String) -> Bool {
    let state = entries.withLock { $0[chunkName]?.first(where: { $0.source == source })?.state }
    if case .compiled? = state { return true }
    return false
  }
}
