describe("second file", function()
  it("does not see the first file's global", function()
    assert.is_nil(LEAKED)
    assert.is_nil(package.loaded.leaky)
  end)

  insulate("an insulated block", function()
    it("sets a global", function() INSULATED = 1 end)
  end)

  it("does not see the insulated global", function()
    assert.is_nil(INSULATED)
  end)

  expose("an exposed block", function()
    it("sets a global", function() EXPOSED = 1 end)
  end)

  it("sees the exposed global", function()
    assert.are.equal(1, EXPOSED)
  end)
end)
