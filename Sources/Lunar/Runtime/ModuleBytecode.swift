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
  private struct Key: Hashable {
    let chunkName: String
    let source: [UInt8]

    // The source hashed as one buffer: [UInt8]'s own hash(into:) combines
    // byte by byte, which for `lunar.workflow`'s 40 KB was 3.5 million
    // instructions on every require.
    func hash(into hasher: inout Hasher) {
      hasher.combine(chunkName)
      source.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
  }

  private enum Entry {
    /// Loaded once, from source.
    case seen
    /// Compiled and dumped.
    case compiled([UInt8])
  }

  private static let entries = Mutex<[Key: Entry]>([:])

  /// Pushes `source`, named `chunkName`, as a function on `state`'s stack,
  /// compiled from source or loaded from its kept bytecode.
  static func load(_ source: [UInt8], chunkName: String, on state: LuaState) throws(LuaError) {
    let key = Key(chunkName: chunkName, source: source)
    let entry = entries.withLock { entries -> Entry? in
      let entry = entries[key]
      if entry == nil { entries[key] = .seen }
      return entry
    }
    if case .compiled(let bytecode)? = entry {
      try state.load(bytes: bytecode, name: chunkName, mode: .binary)
      return
    }
    try state.load(bytes: source, name: chunkName, mode: .text)
    if case .seen? = entry {
      let bytecode = state.dump(strip: false)
      entries.withLock { $0[key] = .compiled(bytecode) }
    }
  }

  /// Whether `source`, named `chunkName`, is kept as bytecode by now.
  static func isCompiled(_ source: [UInt8], chunkName: String) -> Bool {
    if case .compiled? = entries.withLock({ $0[Key(chunkName: chunkName, source: source)] }) { return true }
    return false
  }
}
