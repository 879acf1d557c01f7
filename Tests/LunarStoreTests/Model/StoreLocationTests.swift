import Foundation
import Testing
import TestSupport

@testable import LunarStore

private func parse(_ url: String, in folder: String = "/work/here", home: String = "/home/ada") throws(StoreError) -> StoreLocation {
  try StoreLocation(parsing: url, currentFolder: folder, environment: ["HOME": home])
}

@Suite struct StoreLocationTests {
  @Test func sqlitePathsAreAnchoredToTheCurrentFolder() throws {
    #expect(try parse("sqlite:runs.db").backend == .sqlite(path: "/work/here/runs.db"))
    #expect(try parse("sqlite:../x/runs.db").backend == .sqlite(path: "/work/here/../x/runs.db"))
    #expect(try parse("sqlite:/var/lib/runs.db").backend == .sqlite(path: "/var/lib/runs.db"))
    #expect(try parse("sqlite:///var/lib/runs.db").backend == .sqlite(path: "/var/lib/runs.db"))
    #expect(try parse("SQLite:~/runs.db").backend == .sqlite(path: "/home/ada/runs.db"))
    #expect(try parse("sqlite:a.db", in: "/").backend == .sqlite(path: "/a.db"))
    #expect(try parse("sqlite:runs.db").isDefault == false)
    #expect(try parse("sqlite:runs.db").description == "sqlite:/work/here/runs.db")
  }

  @Test func badURLsGetOneLineThatSaysWhatToWrite() {
    let cases: [(String, String)] = [
      ("runs.db", "'runs.db' is not a store URL: for a SQLite file write sqlite:runs.db"),
      ("/tmp/runs.db", "'/tmp/runs.db' is not a store URL: for a SQLite file write sqlite:/tmp/runs.db"),
      ("", "the store URL is empty: write sqlite:PATH or postgres://..."),
      ("sqlite:", "'sqlite:' names no file: write sqlite:PATH"),
      ("sqlite://host/x.db", "'sqlite://host/x.db' names a host; a SQLite store is sqlite:PATH or sqlite:///ABSOLUTE/PATH"),
      ("mysql://db/runs", "unknown kind of store 'mysql:' in 'mysql://db/runs': use sqlite:PATH or postgres://..."),
    ]
    for (url, message) in cases {
      let error = #expect(throws: StoreError.self) { try parse(url) }
      #expect(error?.kind == .badLocation)
      #expect(error?.message == message)
      #expect(error?.message.contains("\n") == false)
    }
  }

  @Test func postgresURLsAreKeptWithTheirPasswordsHiddenInMessages() throws {
    let location = try parse("postgresql://lunar:hunter2@db.example:5432/runs")
    #expect(location.backend == .postgres(url: "postgresql://lunar:hunter2@db.example:5432/runs"))
    #expect(location.description == "postgresql://lunar:***@db.example:5432/runs")
    #expect(try parse("postgres://db/runs").backend == .postgres(url: "postgres://db/runs"))
    #expect(try parse("postgres://u:p@db?sslmode=require").description == "postgres://u:***@db?sslmode=require")
    #expect(
      try parse("postgres:///runs?host=/run/pg&password=hunter2&user=ada").description
        == "postgres:///runs?host=/run/pg&password=***&user=ada")
  }

  @Test func aMalformedPostgresURLIsOneLine() {
    let cases: [(String, String)] = [
      ("postgres://db/runs?colour=blue", "'postgres://db/runs?colour=blue' is not a PostgreSQL URL: invalid URI query parameter: \"colour\""),
      ("postgres://[::1/runs", "'postgres://[::1/runs' is not a PostgreSQL URL: end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgres://[::1/runs\""),
      ("postgres://u:secret@db/runs?password=se%zzcret", "'postgres://u:***@db/runs?password=***' is not a PostgreSQL URL: invalid percent-encoded token: \"***\""),
    ]
    for (url, message) in cases {
      let error = #expect(throws: StoreError.self) { try parse(url) }
      #expect(error?.kind == .badLocation)
      #expect(error?.message == message)
      #expect(error?.message.contains("secret") == false)
    }
  }

  @Test func theOptionBeatsTheEnvironmentWhichBeatsTheDefault() throws {
    let environment = ["HOME": "/home/ada", "LUNAR_STORE": "sqlite:env.db", "XDG_STATE_HOME": "/state"]
    let option = try StoreLocation.chosen(option: "sqlite:opt.db", environment: environment, currentFolder: "/w")
    #expect(option == StoreLocation(.sqlite(path: "/w/opt.db")))
    let variable = try StoreLocation.chosen(option: nil, environment: environment, currentFolder: "/w")
    #expect(variable == StoreLocation(.sqlite(path: "/w/env.db")))
    var empty = environment
    empty["LUNAR_STORE"] = ""
    let fallback = try StoreLocation.chosen(option: nil, environment: empty, currentFolder: "/w")
    #expect(fallback == StoreLocation(.sqlite(path: "/state/lunar/lunar.db"), isDefault: true))
    let fromOption = #expect(throws: StoreError.self) {
      try StoreLocation.chosen(option: "x.db", environment: environment, currentFolder: "/w")
    }
    #expect(fromOption?.message == "--store: 'x.db' is not a store URL: for a SQLite file write sqlite:x.db")
    let fromVariable = #expect(throws: StoreError.self) {
      try StoreLocation.chosen(option: nil, environment: ["LUNAR_STORE": "x.db"], currentFolder: "/w")
    }
    #expect(fromVariable?.message == "LUNAR_STORE: 'x.db' is not a store URL: for a SQLite file write sqlite:x.db")
  }

  @Test func theDefaultFollowsXDGStateHome() throws {
    #expect(
      try StoreLocation.defaultLocation(environment: ["HOME": "/home/ada"]).backend
        == .sqlite(path: "/home/ada/.local/state/lunar/lunar.db"))
    #expect(
      try StoreLocation.defaultLocation(environment: ["HOME": "/home/ada", "XDG_STATE_HOME": "/xdg"]).backend
        == .sqlite(path: "/xdg/lunar/lunar.db"))
    // A relative XDG_STATE_HOME is invalid and ignored, as the specification says.
    #expect(
      try StoreLocation.defaultLocation(environment: ["HOME": "/home/ada", "XDG_STATE_HOME": "state"]).backend
        == .sqlite(path: "/home/ada/.local/state/lunar/lunar.db"))
  }

  @Test func theDefaultStoresFoldersAreCreatedPrivate() throws {
    let folder = try TemporaryFolder()
    let state = folder.url.appendingPathComponent("xdg/state").path
    let location = try StoreLocation.defaultLocation(environment: ["XDG_STATE_HOME": state])
    let store = try location.openRunStore()
    #expect(store.location == "sqlite:\(state)/lunar/lunar.db")
    for path in [folder.url.appendingPathComponent("xdg").path, state, state + "/lunar"] {
      let attributes = try FileManager.default.attributesOfItem(atPath: path)
      #expect((attributes[.posixPermissions] as? Int) == 0o700, "\(path)")
    }
    #expect(FileManager.default.fileExists(atPath: state + "/lunar/lunar.db"))
    // A chosen path's folders are not made up: a typo is an error.
    let typo = try StoreLocation(parsing: "sqlite:" + folder.url.appendingPathComponent("typo/runs.db").path, currentFolder: "/")
    let error = #expect(throws: StoreError.self) { try typo.openRunStore() }
    #expect(error?.message == "cannot create store \(folder.url.path)/typo/runs.db: no such folder \(folder.url.path)/typo")
  }

  @Test func openingWithoutCreatingMakesNoFolderAndNoFile() throws {
    let folder = try TemporaryFolder()
    let state = folder.url.appendingPathComponent("xdg").path
    let location = try StoreLocation.defaultLocation(environment: ["XDG_STATE_HOME": state])
    let error = #expect(throws: StoreError.self) { try location.openRunStore(createIfMissing: false) }
    #expect(error?.kind == .missing && error?.message == "no store at \(state)/lunar/lunar.db")
    #expect(!FileManager.default.fileExists(atPath: state), "no folder was made for the default store")
    _ = try location.openRunStore()
    _ = try location.openRunStore(createIfMissing: false)
  }
}
