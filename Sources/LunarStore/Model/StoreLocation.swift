import Glibc

/// Where the run store is: a `--store URL`, else `LUNAR_STORE`, else the
/// default SQLite file `${XDG_STATE_HOME:-$HOME/.local/state}/lunar/lunar.db`.
///
/// URLs: `sqlite:PATH` (relative to the current folder; `~/` is the home
/// folder; `sqlite:///ABSOLUTE/PATH` also works) and libpq's
/// `postgres://...` or `postgresql://...`.
public struct StoreLocation: Sendable, Equatable, CustomStringConvertible {
  /// The kind of store and where it is.
  public enum Backend: Sendable, Equatable {
    /// A SQLite file, by absolute path.
    case sqlite(path: String)
    /// A PostgreSQL server, by its libpq URL.
    case postgres(url: String)
  }

  /// The kind of store and where it is.
  public var backend: Backend
  /// True for the default location, whose missing folders are created
  /// (mode 0700) when the store is opened.
  public var isDefault: Bool

  /// A location with both parts given.
  public init(_ backend: Backend, isDefault: Bool = false) {
    self.backend = backend
    self.isDefault = isDefault
  }

  /// The location a store URL names; `currentFolder` anchors relative paths,
  /// `environment`'s `HOME` expands `~/`.
  /// - Throws: `StoreError` (`.badLocation`) for anything else, in one line.
  public init(parsing url: String, currentFolder: String, environment: [String: String] = [:]) throws(StoreError) {
    guard !url.isEmpty else { throw StoreError(.badLocation, "the store URL is empty: write sqlite:PATH or postgres://...") }
    guard let colon = url.firstIndex(of: ":"), Self.isScheme(url[..<colon]) else {
      throw StoreError(.badLocation, "'\(url)' is not a store URL: for a SQLite file write sqlite:\(url)")
    }
    let scheme = url[..<colon].lowercased()
    let rest = String(url[url.index(after: colon)...])
    switch scheme {
    case "sqlite":
      var path = rest
      if path.hasPrefix("//") {
        guard path.hasPrefix("///") else {
          throw StoreError(.badLocation, "'\(url)' names a host; a SQLite store is sqlite:PATH or sqlite:///ABSOLUTE/PATH")
        }
        path.removeFirst(2)
      }
      guard !path.isEmpty else { throw StoreError(.badLocation, "'\(url)' names no file: write sqlite:PATH") }
      if path.hasPrefix("~/") {
        guard let home = Self.home(environment) else {
          throw StoreError(.badLocation, "'\(url)': no home folder to expand ~ (set HOME)")
        }
        path = home + path.dropFirst()
      } else if !path.hasPrefix("/") {
        path = (currentFolder.hasSuffix("/") ? currentFolder : currentFolder + "/") + path
      }
      self.init(.sqlite(path: path))
    case "postgres", "postgresql":
      self.init(.postgres(url: url))
      if var problem = PostgresConnection.problem(with: url) {
        // libpq quotes the token it could not read, which may be a password.
        for password in Self.passwords(in: url) where !password.isEmpty {
          problem = problem.replacing(password, with: "***")
        }
        throw StoreError(.badLocation, "'\(self)' is not a PostgreSQL URL: \(problem)")
      }
    default:
      throw StoreError(.badLocation, "unknown kind of store '\(scheme):' in '\(url)': use sqlite:PATH or postgres://...")
    }
  }

  /// The store a command uses: `option` (`--store`) if given, else a
  /// non-empty `LUNAR_STORE`, else the default. Errors name where the URL
  /// came from.
  public static func chosen(option: String?, environment: [String: String], currentFolder: String) throws(StoreError)
    -> StoreLocation
  {
    do {
      if let option { return try StoreLocation(parsing: option, currentFolder: currentFolder, environment: environment) }
    } catch {
      throw StoreError(error.kind, "--store: \(error.message)")
    }
    do {
      if let value = environment["LUNAR_STORE"], !value.isEmpty {
        return try StoreLocation(parsing: value, currentFolder: currentFolder, environment: environment)
      }
    } catch {
      throw StoreError(error.kind, "LUNAR_STORE: \(error.message)")
    }
    return try defaultLocation(environment: environment)
  }

  /// `${XDG_STATE_HOME:-$HOME/.local/state}/lunar/lunar.db`; an
  /// `XDG_STATE_HOME` that is empty or relative is ignored, as the XDG
  /// specification says.
  public static func defaultLocation(environment: [String: String]) throws(StoreError) -> StoreLocation {
    let state: String
    if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
      state = xdg
    } else if let home = home(environment) {
      state = home + "/.local/state"
    } else {
      throw StoreError(.badLocation, "no home folder for the default store: set HOME or XDG_STATE_HOME, or pass --store")
    }
    return StoreLocation(.sqlite(path: state + "/lunar/lunar.db"), isDefault: true)
  }

  /// Opens the store here: creates the default location's folders (0700)
  /// if missing, then opens or creates the SQLite file, or connects to the
  /// PostgreSQL server and creates the store's tables if its schema is
  /// empty. With `createIfMissing` false nothing is created: a missing
  /// store is a `.missing` error.
  public func openRunStore(createIfMissing: Bool = true, options: SQLiteRunStore.Options = .init()) throws(StoreError)
    -> any RunStore
  {
    switch backend {
    case .sqlite(let path):
      if isDefault && createIfMissing { try Self.createFolders(for: path) }
      return try SQLiteRunStore(path: path, createIfMissing: createIfMissing, options: options)
    case .postgres(let url):
      return try PostgresRunStore(url: url, location: description, createIfMissing: createIfMissing)
    }
  }

  /// Opens the queues of the store here, creating or migrating the store
  /// as `openRunStore` does.
  public func openQueueStore(createIfMissing: Bool = true, options: SQLiteRunStore.Options = .init()) throws(StoreError)
    -> any QueueStore
  {
    switch backend {
    case .sqlite(let path):
      if isDefault && createIfMissing { try Self.createFolders(for: path) }
      return try SQLiteQueueStore(path: path, createIfMissing: createIfMissing, options: options)
    case .postgres(let url):
      return try PostgresQueueStore(url: url, location: description, createIfMissing: createIfMissing)
    }
  }

  /// The URL that names this location again, password included: for a
  /// child process's `LUNAR_STORE`, never for a message.
  public var url: String {
    switch backend {
    case .sqlite(let path): return "sqlite:" + path
    case .postgres(let url): return url
    }
  }

  /// `sqlite:PATH`, or the PostgreSQL URL with any password hidden.
  public var description: String {
    switch backend {
    case .sqlite(let path): return "sqlite:" + path
    case .postgres(let url): return Self.hidingPasswords(url)
    }
  }

  /// `url` with its password, in the authority or as a `password=`
  /// parameter, shown as `***`.
  private static func hidingPasswords(_ url: String) -> String {
    var url = Substring(url)
    // postgres://user:secret@host/db → postgres://user:***@host/db
    if let password = authorityPassword(in: url) { url = url[..<password.lowerBound] + "***" + url[password.upperBound...] }
    // ...?host=db&password=secret → ...?host=db&password=***
    guard let query = url.firstIndex(of: "?") else { return String(url) }
    let parameters = url[url.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
      parameter.lowercased().hasPrefix("password=") ? parameter.prefix("password=".count) + "***" : parameter
    }
    return String(url[...query]) + parameters.joined(separator: "&")
  }

  /// The passwords `url` holds, as written.
  private static func passwords(in url: String) -> [String] {
    let authority = authorityPassword(in: Substring(url)).map { [String(url[$0])] } ?? []
    guard let query = url.firstIndex(of: "?") else { return authority }
    return authority
      + url[url.index(after: query)...].split(separator: "&").filter { $0.lowercased().hasPrefix("password=") }
      .map { String($0.dropFirst("password=".count)) }
  }

  /// Where the password of `user:password@host` is in `url`, if it has one.
  private static func authorityPassword(in url: Substring) -> Range<Substring.Index>? {
    guard let schemeEnd = url.firstIndex(of: ":"), url[schemeEnd...].hasPrefix("://") else { return nil }
    let authority = url.index(schemeEnd, offsetBy: 3)
    let authorityEnd = url[authority...].firstIndex { $0 == "/" || $0 == "?" } ?? url.endIndex
    guard let at = url[authority..<authorityEnd].lastIndex(of: "@"), let colon = url[authority..<at].firstIndex(of: ":")
    else { return nil }
    return url.index(after: colon)..<at
  }

  /// The current folder, for anchoring relative paths.
  public static var currentFolder: String {
    guard let path = getcwd(nil, 0) else { return "." }
    defer { free(path) }
    return String(cString: path)
  }

  private static func isScheme(_ text: Substring) -> Bool {
    guard let first = text.utf8.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) else {
      return false
    }
    return text.utf8.allSatisfy { b in
      (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x2B || b == 0x2D
        || b == 0x2E
    }
  }

  private static func home(_ environment: [String: String]) -> String? {
    if let home = environment["HOME"], home.hasPrefix("/") { return home }
    guard let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir else { return nil }
    let home = String(cString: dir)
    return home.hasPrefix("/") ? home : nil
  }

  /// Creates each missing folder above `path`, mode 0700, as the XDG
  /// specification asks for state folders.
  private static func createFolders(for path: String) throws(StoreError) {
    var folder = ""
    for component in StoreFileCheck.parentFolder(of: path).split(separator: "/") {
      folder += "/" + component
      if mkdir(folder, 0o700) != 0 && errno != EEXIST {
        throw StoreError(.database, "cannot create folder \(folder) for the store: \(String(cString: strerror(errno)))")
      }
    }
  }
}
