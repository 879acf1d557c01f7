/// Loop-side state a plugin keeps in a runtime: one object of each type,
/// made on its first use and kept as long as the runtime. Plugins, built-in
/// or not, keep their state this way and find each other's by type:
/// `runtime.component(MachineSystem.self)`. Loop thread only.
public protocol RuntimeComponent: AnyObject {
  /// Makes the component for `core`, on the loop thread, when it is first
  /// asked for (it must not ask for itself while being made).
  init(core: RuntimeCore)
}
