/// How a runtime's actions run: the plugin's own options
/// (`ActionModulePlugin(options:)`), given when the plugin is made.
public struct ActionOptions: Sendable {
  /// The HTTP service actions use (`ctx.http`; tests put a stub here).
  public var http: any HTTPService = CurlHTTPClient()
  /// Record the run's outside calls to a journal, or replay one (`--record`, `--replay`).
  public var recording: Journal.Mode?
  /// How deep action chains may go.
  public var recursionLimit = 32

  /// Options for the plugin; by default real HTTP, no journal, chains 32 deep.
  public init(http: any HTTPService = CurlHTTPClient(), recording: Journal.Mode? = nil, recursionLimit: Int = 32) {
    self.http = http
    self.recording = recording
    self.recursionLimit = recursionLimit
  }
}
