/// Why a workflow sleep step could not record its deadline; its text is the
/// Lua error the step fails with.
struct WaitError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) { self.description = description }
}
