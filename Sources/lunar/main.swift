#if canImport(Glibc)
import Glibc
#endif

// Runtime code stays out of main.swift: closures here are main-actor
// isolated and would trap when called from the runtime's own thread.
Signals.restoreDefaults()
exit(LunarCommandLine.main(words: ArgumentBytes.all))
