import Foundation
import Testing
import TestSupport

/// Numbers from scripts and configuration never trap the process: a bad one
/// is a `bad argument` error the script can catch, and one huge but valid
/// is simply large.
@Suite struct NumericArgumentTests {
  /// A RocketLaunch.Live feed of two launches.
  static let feed = """
    {"result":[{"id":5001,"sort_date":"1799158800","name":"Starlink Group 12-7","provider":{"name":"SpaceX"},\
    "vehicle":{"name":"Falcon 9"},"pad":{"name":"SLC-40","location":{"name":"Cape Canaveral SFS, Florida",\
    "country":"United States"}},"t0":"2027-01-05T14:20Z","date_str":"Jan 05"},{"id":5002,"sort_date":"1799532000",\
    "name":"USSF-112","provider":{"name":"ULA"},"vehicle":{"name":"Vulcan VC4S"},"pad":{"name":"SLC-41"},\
    "win_open":"2027-01-09T22:00Z","date_str":"Jan 09"}]}
    """

  @Test func aBadLimitInsideLunarTestKeepsEveryFilesResults() async throws {
    let folder = try TemporaryFolder()
    let feed = try folder.write("feed.json", Self.feed)
    try folder.write("launches_spec.lua", """
      local launches = require "lunar.launches"
      launches.configure { endpoints = { ["rocketlaunch.live"] = "file://\(feed)" } }
      it("refuses a negative limit", function()
        local ok, err = pcall(launches.upcoming, { source = "rocketlaunch.live", limit = -1 })
        assert.is_false(ok)
        assert.matches("bad argument #1 to 'upcoming' %(field 'limit' must be a non%-negative integer, got %-1%)", err)
      end)
      it("refuses the smallest integer", function()
        assert.has_error(function() launches.upcoming { source = "rocketlaunch.live", limit = math.mininteger } end)
      end)
      it("takes a good one", function()
        assert.are.equal(1, #launches.upcoming { source = "rocketlaunch.live", limit = 1 })
      end)
      """)
    try folder.write("other_spec.lua", "it('still counts', function() end)")
    let outcome = try await LunarProcess.run(["test", "."], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
    #expect(outcome.stdout.hasSuffix("4 passed, 0 failed, 0 errors, 0 pending\n"))
  }

  @Test func aBadLimitInARunIsAnErrorNamingTheLine() async throws {
    let folder = try TemporaryFolder()
    let feed = try folder.write("feed.json", Self.feed)
    let outcome = try await LunarProcess.run(["run", "-"], input: """
      local launches = require "lunar.launches"
      launches.configure { endpoints = { ["rocketlaunch.live"] = "file://\(feed)" } }
      print(pcall(launches.upcoming, { source = "rocketlaunch.live", limit = math.mininteger }))
      launches.upcoming { source = "rocketlaunch.live", limit = -1 }
      """)
    #expect(outcome.status == 1)
    #expect(outcome.stdout
      == "false\tbad argument #1 to 'upcoming' (field 'limit' must be a non-negative integer, got -9223372036854775808)\n")
    #expect(outcome.stderr.hasPrefix(
      "lunar: stdin:4: bad argument #1 to 'upcoming' (field 'limit' must be a non-negative integer, got -1)\n"))
  }

  /// A sleep short of the clock's horizon (2^53 s) moves virtual time that
  /// far; the trace shows times no millisecond count can hold.
  @Test func aHugeVirtualSleepIsTracedNotTrapped() async throws {
    let outcome = try await LunarProcess.run(
      ["run", "--trace", "--clock", "virtual", "-"], input: "lunar.sleep(9e15) print('woke')")
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "woke\n")
    #expect(outcome.stderr.contains("timer.fired after=9e+15"))
  }

  @Test func bustedJobsAreCheckedAndNeverSpin() async throws {
    let folder = try TemporaryFolder()
    try folder.write("a_spec.lua", "it('works', function() end)")
    try folder.write(".busted", "return { default = { jobs = math.maxinteger } }")
    let many = try await LunarProcess.run(["test", "."], in: folder.url)
    #expect(many.status == 0, "\(many.stderr)")
    #expect(many.stdout.hasSuffix("1 passed, 0 failed, 0 errors, 0 pending\n"))
    for (value, shown) in [("-1", "-1"), ("2.5", "2.5"), ("'4'", "\"4\"")] {
      try folder.write(".busted", "return { default = { jobs = \(value) } }")
      let bad = try await LunarProcess.run(["test", "."], in: folder.url)
      #expect(bad.status == 2)
      #expect(bad.stderr == "lunar: .busted: 'jobs' must be a positive integer, got \(shown)\n")
    }
  }
}
