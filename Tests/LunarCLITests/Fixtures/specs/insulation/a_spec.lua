describe("first file", function()
  it("leaks a global and a module", function()
    LEAKED = true
    package.loaded.leaky = { here = true }
    assert.is_true(LEAKED)
  end)
end)
