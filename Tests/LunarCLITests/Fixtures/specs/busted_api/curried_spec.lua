-- Curried calls, as busted accepts them: `it "name" (function() ... end)`.
describe "curried" (function()
  local calls = {}
  before_each "records" (function() calls[#calls + 1] = "before" end)

  it "runs a curried test" (function()
    assert.are.same({ "before" }, calls)
  end)

  it "fails a curried test" (function()
    assert.are.equal(1, 2)
  end)

  describe "nested" (function()
    it "runs" (function() end)
  end)
end)

context "a context" (function()
  spec "a spec" (function() end)
  test "a test" (function() error("boom") end)
end)
