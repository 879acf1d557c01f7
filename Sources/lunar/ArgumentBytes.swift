#if canImport(Glibc)
import Glibc
#endif
import LuaKit

/// The command line as the bytes it was typed as. `CommandLine.arguments`
/// replaces bytes that are not UTF-8 with U+FFFD, so a name from Lua that
/// is not text (`"b\255in"`) could not be asked for; the words are read
/// from the process's own argument vector instead.
enum ArgumentBytes {
  /// Every word of this process's command line, the program's first.
  static var all: [LuaString] {
    (0..<Int(CommandLine.argc)).map { index in
      guard let argument = CommandLine.unsafeArgv[index] else { return LuaString(bytes: []) }
      return LuaString(bytes: Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument))))
    }
  }

  /// How a word reads in messages and wherever Lunar needs text: its UTF-8,
  /// each byte that is not part of valid UTF-8 escaped as in a Lua literal
  /// (`b\255in`), so no two words read alike by a replacement character.
  static func text(_ word: LuaString) -> String { word.textEscapingInvalidUTF8 }
}
