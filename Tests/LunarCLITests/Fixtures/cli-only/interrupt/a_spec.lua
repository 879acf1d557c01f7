it("passes", function() end)

it("fails", function()
  assert.are.equal(1, 2)
end)
