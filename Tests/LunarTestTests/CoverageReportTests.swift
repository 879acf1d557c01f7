import Testing

@testable import LunarTest

/// Which files a coverage report counts, and how it rounds its total.
@Suite struct CoverageReportTests {
  let scope = CoverageScope(root: "/project", specFiles: ["/project/a_spec.lua"], specFolders: ["/project/spec", "/project"])

  func counted(_ path: String) -> Bool { scope.includes(Array(path.utf8)) }

  @Test func countsTheProjectsOwnFiles() {
    #expect(counted("/project/src/calc.lua"))
    #expect(counted("/project/calc.lua"))
    #expect(counted("/project/specs.lua"))
  }

  @Test func leavesOutSpecsFilesElsewhereAndInstalledLibraries() {
    #expect(!counted("/project/a_spec.lua"))
    #expect(!counted("/project/spec/support/helper.lua"))
    #expect(!counted("/projectile/x.lua"))
    #expect(!counted("/usr/share/lua/5.4/pl/utils.lua"))
    #expect(!counted("/project/lua_modules/share/lua/5.4/inspect.lua"))
    #expect(!counted("/project/lua_modules/lib/lua/5.4/x.lua"))
  }

  @Test func aProjectAtTheRootStillLeavesOutInstalledLibraries() {
    let scope = CoverageScope(root: "/", specFiles: [])
    #expect(scope.includes(Array("/srv/app.lua".utf8)))
    #expect(!scope.includes(Array("/usr/share/lua/5.4/busted/init.lua".utf8)))
  }

  @Test func ratesShowAllOrNothingOnlyWhenTrue() {
    #expect(LcovReport.percent(5, of: 6) == "83.3%")
    #expect(LcovReport.percent(1, of: 16) == "6.2%")
    #expect(LcovReport.percent(1999, of: 2000) == "99.9%")
    #expect(LcovReport.percent(1, of: 2000) == "0.1%")
    #expect(LcovReport.percent(2000, of: 2000) == "100.0%")
    #expect(LcovReport.percent(0, of: 2000) == "0.0%")
  }
}
