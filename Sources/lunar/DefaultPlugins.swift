import Lunar
import LunarLaunches

/// The plugins every `lunar` command installs beyond the built-in ones.
enum DefaultPlugins {
  static var all: [any LunarPlugin] { [LaunchesPlugin()] }
}
