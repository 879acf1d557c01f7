#if canImport(Glibc)
import Glibc
#endif

/// The environment variables Lunar reads (`LUA_INIT`, `LUNAR_PATH`, ...):
/// only those named `LUA_*` or `LUNAR_*`, so start-up does not pay for the rest.
enum Environment {
  static var current: [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      entry += 1
      guard strncmp(pointer, "LUA_", 4) == 0 || strncmp(pointer, "LUNAR_", 6) == 0 else { continue }
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        result[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
    }
    return result
  }

  /// `current` with the variables the default run store's place depends
  /// on (`XDG_STATE_HOME`, `HOME`): what `StoreLocation.chosen` reads.
  static var forStore: [String: String] {
    var result = current
    for name in ["XDG_STATE_HOME", "HOME"] {
      if let value = getenv(name) { result[name] = String(cString: value) }
    }
    return result
  }
}
