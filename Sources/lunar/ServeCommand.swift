#if canImport(Glibc)
import Glibc
#endif
import Lunar
import LunarServe
import LunarStore

/// `lunar serve`: the store's runs as web pages, until SIGINT or SIGTERM.
/// Loopback by default; any other address needs a token.
enum ServeCommand {
  static let spec = CommandSpec(
    name: "serve",
    summary: "Serve the store's runs as web pages (default http://127.0.0.1:8765/).",
    options: [
      OptionSpec(name: "listen", value: "ADDR:PORT", help: "where to listen (default 127.0.0.1:8765; port 0 picks a free one; beyond loopback needs --token)"),
      OptionSpec(name: "store", value: "URL", help: "the store whose runs to show (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "token", value: "T", help: "every request must carry T (?token=T once, then a cookie; default $LUNAR_SERVE_TOKEN)"),
      OptionSpec(name: "read-only", help: "offer no action and refuse every POST"),
    ],
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    let options: ServeSite.Options
    let listen: ListenAddress
    do {
      guard parsed.operands.isEmpty else {
        throw UsageError(message: "serve takes no operands, got '\(RunText.printable(parsed.operands[0]))'", command: "serve")
      }
      do {
        listen = try parsed.value("listen").map { text throws(ListenAddressError) in try ListenAddress(parsing: text) } ?? .standard
      } catch {
        throw UsageError(message: "--listen '\(RunText.printable(error.text))': \(error.problem)", command: "serve")
      }
      let token = parsed.value("token") ?? Environment.current["LUNAR_SERVE_TOKEN"]
      if token?.isEmpty == true { throw UsageError(message: "--token must not be empty", command: "serve") }
      if !listen.isLoopback && token == nil {
        throw UsageError(
          message: "--listen \(listen) reaches beyond this machine: give --token (or LUNAR_SERVE_TOKEN)", command: "serve")
      }
      options = ServeSite.Options(
        store: try StoreOption.location(parsed, command: "serve"), token: token.map(AccessToken.init),
        readOnly: parsed.has("read-only"),
        fingerprint: { file in Fingerprint(ofContent: try BoundedFileReader.read(file)) })
    } catch let error as UsageError {
      return LunarCommandLine.usageFailure(error)
    } catch {
      Console.error("lunar: \(error)")
      return 2
    }
    // Blocked before the server's thread starts, so that it inherits the
    // mask and only this thread, in sigsuspend below, takes the signals.
    var stops = sigset_t()
    var before = sigset_t()
    sigemptyset(&stops)
    sigaddset(&stops, SIGINT)
    sigaddset(&stops, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &stops, &before)
    Signals.catchStopRequests()
    let site = ServeSite(options)
    let server: WebServer
    do {
      server = try WebServer(host: listen.host, port: listen.port, reading: ServeSite.reading) { site.answer($0) }
    } catch {
      Console.error("lunar: serve: \(error)")
      return 1
    }
    print("lunar serve: \(listen.url(port: server.port)) (runs of \(options.store))")
    fflush(nil)
    while Signals.stopRequests == 0 { sigsuspend(&before) }
    server.stop()
    return 0
  }
}
