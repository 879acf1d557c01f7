/// The plugins every runtime installs, in this order, before those of its
/// configuration; each is installed as a third party's plugin would be.
enum BuiltInPlugins {
  static var all: [any LunarPlugin] {
    [
      LunarModulePlugin(), TraceModulePlugin(), QueueModulePlugin(), MachineModulePlugin(), ActionModulePlugin(),
      WorkflowPlugin(), ReplPlugin(),
    ]
  }
}
