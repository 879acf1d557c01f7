import LunarStore
import Testing

/// libpq's messages as Lunar shows them: one line, each part once.
struct PostgresErrorTests {
  @Test func aMessageIsFoldedOntoOneLine() {
    let error = PostgresError(message: "connection to server failed: Connection refused\n\tIs the server running?\n")
    #expect(error.message == "connection to server failed: Connection refused Is the server running?")
  }

  @Test func aLostConnectionToldTwiceIsToldOnce() {
    // libpq's words when a connection dies under a query: once on sending,
    // once on reading.
    let lost = "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request.\n"
    #expect(
      PostgresError(message: lost + lost).message
        == "server closed the connection unexpectedly This probably means the server terminated abnormally before or while processing the request.")
  }
}
