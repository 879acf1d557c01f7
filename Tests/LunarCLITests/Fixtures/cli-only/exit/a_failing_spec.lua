-- A failure in another file, which os.exit must not hide.
it("fails", function()
  assert.are.equal(1, 2)
end)
