import LuaKit

/// The failures of machines' steps and commands that no `settle` has
/// raised yet. They are kept apart from the machines, so that what a
/// machine stopped or freed before anyone settled it is still reported when
/// the run ends (docs/architecture.md, "Tasks, coroutines and waiting": nothing is swallowed). Loop thread only.
final class MachineFailures {
  private var pending: [Int: (machine: LuaString, messages: [String])] = [:]

  /// The failures of the machine registered as `id`, oldest first.
  func messages(of id: Int) -> [String] { pending[id]?.messages ?? [] }

  /// Replaces the failures of the machine registered as `id` (named `machine`).
  func set(_ messages: [String], of id: Int, machine: LuaString) {
    pending[id] = messages.isEmpty ? nil : (machine, messages)
  }

  /// Every failure no settle raised, oldest machine first, now forgotten.
  func takeAll() -> [UnobservedError] {
    defer { pending.removeAll() }
    return pending.keys.sorted().compactMap { id in
      pending[id].map { UnobservedError(machine: $0.machine, messages: $0.messages) }
    }
  }
}
