// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "Lunar",
  products: [
    .executable(name: "lunar", targets: ["lunar"]),
    .library(name: "LuaKit", targets: ["LuaKit"]),
    .library(name: "Lunar", targets: ["Lunar"]),
    .library(name: "LunarTest", targets: ["LunarTest"]),
    .library(name: "LunarLaunches", targets: ["LunarLaunches"]),
  ],
  targets: [
    // Debian's liblua5.4-dev, found through pkg-config.
    .systemLibrary(
      name: "CLua",
      pkgConfig: "lua5.4",
      providers: [.apt(["liblua5.4-dev"])]
    ),
    // The C layer: Lua's macros as functions, the host-function trampoline,
    // the allocator with its limit, and the coroutine wrappers.
    .target(name: "CLuaShim", dependencies: ["CLua"]),
    // The safe Swift binding of Lua; knows nothing of workflows.
    .target(name: "LuaKit", dependencies: ["CLuaShim", "CLua"], linkerSettings: [.linkedLibrary("m")]),
    // Opens a library a single command needs when that command first uses it.
    .target(name: "CSharedLibrary", linkerSettings: [.linkedLibrary("dl")]),
    // HTTP through Debian's libcurl, opened on first use (not at start-up).
    .target(name: "CHTTP", dependencies: ["CSharedLibrary"]),
    // SQLite, the run store's file: Debian's libsqlite3-0, opened on first
    // use (not at start-up); libsqlite3-dev's header gives the types.
    .target(name: "CSQLite", dependencies: ["CSharedLibrary"]),
    // PostgreSQL's client, Debian's libpq5, opened on first use (not at
    // start-up); libpq-dev's header gives the types.
    .target(name: "CPostgres", dependencies: ["CSharedLibrary"]),
    // libmicrohttpd, the HTTP server of `lunar serve`, opened on first use.
    .target(name: "CMicroHTTPD", dependencies: ["CSharedLibrary"]),
    // State that outlives a process: the run store, its SQLite and
    // PostgreSQL backends, fingerprints. Knows LuaKit's values, not the
    // workflow engine.
    .target(name: "LunarStore", dependencies: ["LuaKit", "CSQLite", "CPostgres"]),
    // `lunar serve`: the store's runs as web pages, over CMicroHTTPD.
    .target(name: "LunarServe", dependencies: ["Lunar", "LunarStore", "LunarSchedules", "LuaKit", "CMicroHTTPD"]),
    // Schedules: cron expressions and the ticker that starts a schedule's
    // runs. Foundation only for its time zones.
    .target(name: "LunarSchedules", dependencies: ["LunarStore", "LuaKit"]),
    // The workflow runtime built on LuaKit.
    .target(
      name: "Lunar", dependencies: ["LuaKit", "LunarStore", "CHTTP"],
      resources: [
        .embedInCode("Workflow/workflow.lua"),
        .embedInCode("Repl/repl.lua"),
        .embedInCode("Actions/actions.lua"),
        .embedInCode("Machine/machine.lua"),
        .embedInCode("Sandbox/sandbox.lua"),
        .embedInCode("Queue/worker.lua"),
        .embedInCode("Runtime/inert.lua"),
      ]),
    // Launch schedules: providers, the refresh policy, reminders, lunar.launches;
    // each source's sample feed is shipped inside, for offline runs.
    .target(
      name: "LunarLaunches", dependencies: ["Lunar", "LuaKit"],
      resources: [
        .embedInCode("Samples/rocketlaunch-live.json"),
        .embedInCode("Samples/launch-library-2.json"),
        .embedInCode("launches.lua"),
      ]),
    // The busted-compatible spec runner and its reporters.
    .target(
      name: "LunarTest", dependencies: ["Lunar", "LuaKit", "CLuaShim", "CLua"],
      resources: [
        .embedInCode("lua/busted.lua"),
        .embedInCode("lua/luassert.lua"),
        .embedInCode("lua/setup.lua"),
        .embedInCode("lua/driver.lua"),
      ]),
    // Line editing from Debian's libedit, opened by the REPL only.
    .target(name: "CLineEditor", linkerSettings: [.linkedLibrary("dl")]),
    // The command-line front end.
    .executableTarget(
      name: "lunar",
      dependencies: ["Lunar", "LunarTest", "LunarLaunches", "LunarStore", "LunarSchedules", "LunarServe", "LuaKit", "CLineEditor"],
      exclude: ["Linker"],
      // What `lunar types` writes: editor types for lua-language-server, its
      // .luarc.json and luacheck's standard (see EditorTypes.swift).
      resources: [
        .embedInCode("Types/lunar.lua"), .embedInCode("Types/lunar/queue.lua"), .embedInCode("Types/lunar/machine.lua"),
        .embedInCode("Types/lunar/actions.lua"), .embedInCode("Types/lunar/workflow.lua"),
        .embedInCode("Types/lunar/trace.lua"), .embedInCode("Types/lunar/launches.lua"),
        .embedInCode("Types/lunar/repl.lua"), .embedInCode("Types/luarc.json"), .embedInCode("Types/luacheckrc.lua"),
        // What the console asks of its runtime (ReplCommand.swift).
        .embedInCode("console.lua"),
      ],
      linkerSettings: [
        // Links libstdc++ statically with the static Swift runtime (see Linker/libstdc++.so).
        .unsafeFlags(["-L", Context.packageDirectory + "/Sources/lunar/Linker"]),
        // A position-dependent release binary: the ~29,000 relocations of a PIE's
        // Swift metadata cost 60 copied pages and about 0.2 ms on every start
        // (docs/decisions.md, "Start-up").
        .unsafeFlags(["-Xclang-linker", "-no-pie"], .when(configuration: .release)),
        // Exports none of the binary's own symbols (the build exports its 5,400
        // public Swift ones): nothing loaded into it links against lunar, and
        // the Swift runtime's start-up dladdr walked every one of them
        // (docs/decisions.md, "Start-up").
        .unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release)),
      ]
    ),
    // Benchmarks; run by scripts/bench, never by swift test.
    .executableTarget(name: "LunarBench", dependencies: ["Lunar", "LunarStore", "LuaKit", "CLuaShim", "CLua", "CBenchSupport"]),
    .target(name: "CBenchSupport", dependencies: ["CLua"]),
    .testTarget(name: "LuaKitTests", dependencies: ["LuaKit", "CLuaShim", "CLua", "TestSupport"]),
    // Test helpers shared by the test targets (a real local HTTP server).
    .target(name: "TestSupport", dependencies: ["CPostgres"], path: "Tests/TestSupport"),
    .testTarget(name: "LunarTests", dependencies: ["Lunar", "LunarStore", "LuaKit", "CLuaShim", "CLua", "TestSupport"]),
    .testTarget(name: "LunarTestTests", dependencies: ["LunarTest", "Lunar", "LuaKit"]),
    .testTarget(name: "LunarLaunchesTests", dependencies: ["LunarLaunches", "Lunar", "LuaKit", "TestSupport"], exclude: ["Fixtures"]),
    // Writes steps to a store in a loop; the store's crash and concurrency
    // tests kill and race it. Never shipped.
    .executableTarget(name: "LunarStoreProbe", dependencies: ["LunarStore", "LuaKit", "TestSupport"]),
    .testTarget(name: "LunarStoreTests", dependencies: ["LunarStore", "LuaKit", "LunarStoreProbe", "TestSupport"]),
    .testTarget(name: "LunarServeTests", dependencies: ["LunarServe", "LunarStore", "LuaKit", "TestSupport"]),
    .testTarget(name: "LunarSchedulesTests", dependencies: ["LunarSchedules", "LunarStore", "LuaKit", "TestSupport"]),
    .testTarget(name: "LunarCLITests", dependencies: ["lunar", "LunarStore", "LuaKit", "TestSupport"], exclude: ["Fixtures"]),
  ],
  swiftLanguageModes: [.v6]
)
