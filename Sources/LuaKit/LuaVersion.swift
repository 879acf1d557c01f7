import CLua

/// The version of the Lua library Lunar is linked with.
public enum LuaVersion {
  /// `Lua 5.4`, as `_VERSION` says.
  public static let description = "Lua " + LUA_VERSION_MAJOR + "." + LUA_VERSION_MINOR + "." + LUA_VERSION_RELEASE
}
