/// Where a value sits inside a larger one, written as Lua code would reach
/// it: `payload.items[3]`. Used to name the culprit in conversion errors.
public struct LuaPath: Sendable, Hashable, CustomStringConvertible {
  /// What the path starts from, for example `payload` or `argument #1`;
  /// empty for a path that starts at its first key.
  public var root: String
  /// The keys followed from the root, in order.
  public var keys: [LuaKey]

  /// A path at `root` with no keys yet.
  public init(_ root: String, keys: [LuaKey] = []) {
    self.root = root
    self.keys = keys
  }

  /// The path one key deeper.
  public func appending(_ key: LuaKey) -> LuaPath {
    LuaPath(root, keys: keys + [key])
  }

  /// With an empty root, the path starts at its first key: `context.items`.
  public var description: String {
    keys.reduce(root) { path, key in
      let component = key.pathComponent
      return path.isEmpty && component.hasPrefix(".") ? String(component.dropFirst()) : path + component
    }
  }
}
