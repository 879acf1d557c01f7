describe("os.exit", function()
  it("passes before", function() end)

  it("exits with success", function()
    os.exit(0)
  end)

  it("exits with a status", function()
    os.exit(3)
  end)

  it("runs after the exits", function() end)

  it("exits even when the exit is caught", function()
    pcall(os.exit, true)
  end)
end)
