#if canImport(Glibc)
import Glibc
#endif
import LuaKit

/// The bytes a command-line word was typed as. `CommandLine.arguments`
/// replaces bytes that are not UTF-8 with U+FFFD, so a name from Lua that
/// is not text (`"b\255in"`) could not be asked for; its word is found again
/// in the process's own argument vector.
enum ArgumentBytes {
  /// The bytes of `word`, one of this process's arguments: its UTF-8, or,
  /// if it holds a replacement character, the argument it was decoded from
  /// (when exactly one argument decodes to it).
  static func of(_ word: String) -> LuaString {
    guard word.unicodeScalars.contains("\u{FFFD}") else { return LuaString(word) }
    var matches = Set<[UInt8]>()
    for index in 0..<Int(CommandLine.argc) {
      guard let argument = CommandLine.unsafeArgv[index] else { continue }
      let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument)).map { $0 }
      // Compared by scalars: `==` on strings would merge canonically
      // equivalent but distinct names.
      if String(decoding: bytes, as: UTF8.self).unicodeScalars.elementsEqual(word.unicodeScalars) {
        matches.insert(bytes)
      }
    }
    guard matches.count == 1, let bytes = matches.first else { return LuaString(word) }
    return LuaString(bytes: bytes)
  }
}
