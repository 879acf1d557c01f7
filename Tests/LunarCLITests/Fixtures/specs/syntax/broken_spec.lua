describe("broken", function()
  it("never runs", function()
    local x = = 1
  end)
end)
