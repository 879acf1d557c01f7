-- What `require "busted"` returns: the API busted exports.
require "busted.runner" ()
local busted = require "busted"
local exported = { assert = assert, describe = describe, it = it }
local assert = require("busted").assert

busted.describe("the busted module", function()
  busted.it("gives luassert's assert", function()
    assert.are.equal(exported.assert, assert)
    assert.is_true(true)
  end)

  busted.it("gives spies, stubs, mocks and matchers", function()
    local s = busted.spy.new(function() end)
    s(1)
    assert.spy(s).was.called_with(busted.match.is_number())
    local t = { f = function() return 1 end }
    busted.stub(t, "f").returns(2)
    assert.are.equal(2, t.f())
    local m = busted.mock({ g = function() end })
    m.g()
    assert.spy(m.g).was.called()
  end)

  busted.it("exports busted's functions", function()
    for _, name in ipairs {
      "describe", "context", "insulate", "expose", "it", "spec", "test", "pending",
      "before_each", "after_each", "setup", "teardown", "strict_setup", "strict_teardown",
      "lazy_setup", "lazy_teardown", "publish", "subscribe", "unsubscribe", "bindfenv",
      "fail", "gettime", "monotime", "sleep", "parent", "children",
    } do
      assert.are.equal("function", type(busted[name]), name)
    end
    for _, name in ipairs { "assert", "spy", "stub", "mock", "match" } do
      assert.are.equal("table", type(busted[name]), name)
    end
    assert.are.equal("string", type(busted.version))
    assert.are.equal(exported.describe, busted.describe)
    assert.are.equal(exported.it, busted.it)
  end)

  busted.it("is read-only", function()
    assert.has_error(function() busted.extra = 1 end)
  end)

  busted.it("binds a global for one function", function()
    local function bound() return BOUND end
    busted.bindfenv(bound, "BOUND", 42)
    assert.are.equal(42, bound())
    assert.is_nil(BOUND)
  end)

  busted.it("fails through busted.fail", function()
    busted.fail("told to fail")
  end)

  busted.pending("is pending through busted.pending")
end)
