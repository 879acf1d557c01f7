-- The spec runner specified by itself: hooks, environments, pending.
local order = {}

describe("the runner", function()
  setup(function() order[#order + 1] = "setup" end)
  before_each(function() order[#order + 1] = "before" end)
  after_each(function() order[#order + 1] = "after" end)

  it("runs setup once, then before_each around each test", function()
    assert.are.same({ "setup", "before" }, order)
  end)

  it("ran after_each after the previous test", function()
    assert.are.same({ "setup", "before", "after", "before" }, order)
  end)

  describe("environments", function()
    -- These tests set globals on purpose: each block and test has its own.
    -- luacheck: globals BLOCK_GLOBAL TEST_GLOBAL
    BLOCK_GLOBAL = "visible to children"

    it("sees globals of enclosing blocks", function()
      assert.are.equal("visible to children", BLOCK_GLOBAL)
      TEST_GLOBAL = "mine"
    end)

    it("does not see globals of sibling tests", function()
      assert.is_nil(TEST_GLOBAL)
    end)
  end)

  it("runs finally after the test body", function()
    local ran = false
    finally(function() ran = true end)
    assert.is_false(ran)
  end)

  it("parses #tags from names #tagged", function()
    assert.is_true(true)
  end)
end)

describe("busted module", function()
  it("is what require('busted') returns", function()
    local busted = require "busted"
    assert.are.equal(describe, busted.describe)
    assert.are.equal(it, busted.it)
  end)

  it("gives busted's assertions and doubles", function()
    local busted = require "busted"
    assert.are.equal(assert, busted.assert)
    assert.are.equal(spy, busted.spy)
    assert.are.equal(match, busted.match)
  end)
end)

describe "curried calls" (function()
  local ran = {}
  before_each "records" (function() ran[#ran + 1] = "before" end)

  it "run as busted runs them" (function()
    assert.are.same({ "before" }, ran)
  end)
end)
