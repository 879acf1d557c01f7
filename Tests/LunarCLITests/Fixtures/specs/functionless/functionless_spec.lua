describe("a block", function()
  it("runs its tests", function() end)

  -- No function: the test is pending, the block goes on.
  it("has no function yet")

  describe("with no function")

  it("runs after them", function() end)
end)
