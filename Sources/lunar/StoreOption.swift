import LunarStore

/// The store a command reads or writes, as every command chooses it:
/// `--store URL`, else `LUNAR_STORE`, else the default under
/// `XDG_STATE_HOME`; a malformed choice is a usage error of `command`.
enum StoreOption {
  /// The store `parsed` chooses for `command`.
  static func location(_ parsed: ParsedArguments, command: String) throws(UsageError) -> StoreLocation {
    do {
      return try StoreLocation.chosen(
        option: parsed.value("store"), environment: Environment.forStore, currentFolder: StoreLocation.currentFolder)
    } catch {
      throw UsageError(message: error.message, command: command)
    }
  }
}
