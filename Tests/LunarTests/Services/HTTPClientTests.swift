import Foundation
import TestSupport
import Testing

@testable import Lunar

/// The libcurl client against a real local server: it speaks http and
/// https only, redirects included, and cancelling stops a transfer.
@Suite struct HTTPClientTests {
  typealias Reply = TestHTTPServer.Reply

  /// A file only this test knows, with its contents.
  static func secretFile() throws -> (path: String, contents: String) {
    let contents = "secret-\(UUID().uuidString)"
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-secret-\(UUID().uuidString)").path
    try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    return (path, contents)
  }

  /// What `send` gives: the response, or the error it threw.
  static func outcome(_ url: String) async -> Result<HTTPResponse, HTTPError> {
    do {
      return .success(try await CurlHTTPClient().send(HTTPRequest(url: url, timeout: 10)))
    } catch let error as HTTPError {
      return .failure(error)
    } catch {
      return .failure(.transport(url: url, reason: "unexpected \(error)"))
    }
  }

  @Test(arguments: ["file://", "FILE://", "file://localhost"])
  func fileURLsAreRefused(prefix: String) async throws {
    let (path, contents) = try Self.secretFile()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let url = prefix + path
    let outcome = await Self.outcome(url)
    #expect(outcome == .failure(.transport(url: url, reason: "only http:// and https:// URLs are supported")))
    if case .success(let response) = outcome { #expect(!response.text.contains(contents)) }
  }

  @Test func otherSchemesAreRefused() async throws {
    for url in ["ftp://127.0.0.1/x", "gopher://127.0.0.1/", "dict://127.0.0.1/d:x", "127.0.0.1/no-scheme"] {
      guard case .failure(.transport(_, let reason)) = await Self.outcome(url) else {
        Issue.record("\(url) was not refused")
        continue
      }
      #expect(reason == "only http:// and https:// URLs are supported")
    }
  }

  @Test func redirectsFollowHTTPButNeverReachAFile() async throws {
    let (path, contents) = try Self.secretFile()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let server = try TestHTTPServer { request in
      switch request.path {
      case "/hop": Reply(status: 302, headers: ["Location": "/final"])
      case "/final": Reply(body: "arrived")
      default: Reply(status: 302, headers: ["Location": "file://" + path])
      }
    }
    defer { server.stop() }
    let followed = try await CurlHTTPClient().send(HTTPRequest(url: server.url + "/hop", timeout: 10))
    #expect(followed.status == 200 && followed.text == "arrived")
    let outcome = await Self.outcome(server.url + "/to-file")
    guard case .failure(.transport(_, let reason)) = outcome else {
      Issue.record("a redirect to a file gave \(outcome)")
      return
    }
    #expect(!reason.contains(contents))
    #expect(reason.lowercased().contains("protocol"))
  }

  @Test func cancellingStopsAHeldTransfer() async throws {
    let server = try TestHTTPServer { _ in Reply(body: "late", hold: true) }
    defer {
      server.release()
      server.stop()
    }
    let task = Task { try await CurlHTTPClient().send(HTTPRequest(url: server.url + "/held", timeout: 0)) }
    while server.requests.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
    task.cancel()
    let result = await task.result
    guard case .failure(let error) = result else {
      Issue.record("the held request was not cancelled: \(result)")
      return
    }
    #expect(error as? HTTPError == .cancelled)
  }
}
