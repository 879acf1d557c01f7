describe("outcomes", function()
  it("passes", function()
    assert.are.equal(4, 2 + 2)
  end)

  it("fails", function()
    assert.are.same({ 1, { 2 } }, { 1, { 3 } })
  end)

  it("errors", function()
    error("boom")
  end)

  pending("is pending at block level")

  it("is pending inside the test", function()
    pending("not yet")
  end)

  describe("nested", function()
    it("passes too", function()
      assert.is_true(true)
    end)
  end)
end)
