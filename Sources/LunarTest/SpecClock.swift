#if canImport(Glibc)
import Glibc
#endif

/// Monotonic and wall-clock time for durations and the virtual clock's start.
public enum SpecClock {
  public static func now() -> Double { read(CLOCK_MONOTONIC) }
  public static func epochNow() -> Double { read(CLOCK_REALTIME) }

  private static func read(_ id: clockid_t) -> Double {
    var spec = timespec()
    clock_gettime(id, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
}
