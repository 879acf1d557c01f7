import Lunar

/// Where a provider reads its launches: one JSON document, from the web
/// through `http`, from a local file, or the sample shipped inside Lunar.
/// Both providers are this plus their own decoding.
struct JSONFeed: Sendable {
  let location: LaunchFeedLocation
  /// The provider's shipped sample feed, read only when asked for (so a
  /// run that never uses it never builds it).
  let sample: @Sendable () -> [UInt8]
  let http: any HTTPService
  /// Seconds; 0 for none.
  let timeout: Double

  /// The first `limit` launches that `decode` reads from the document (it
  /// returns them in order).
  func fetch(limit: Int, _ decode: ([UInt8]) throws(LaunchFetchError) -> [Launch]) async throws(LaunchFetchError) -> [Launch] {
    let body: [UInt8]
    switch location {
    case .web(let url):
      body = try await ProviderSupport.fetchBody(endpoint: url, http: http, timeout: timeout)
    case .file(let path):
      if Task.isCancelled { throw .cancelled }
      do {
        body = try BoundedFileReader.read(path)
      } catch {
        throw .network(error.description)
      }
    case .sample:
      if Task.isCancelled { throw .cancelled }
      body = sample()
    }
    return Array(try decode(body).prefix(max(0, limit)))
  }
}
