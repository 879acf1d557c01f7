local log = {}
local function note(s) log[#log + 1] = s end

describe("outer", function()
  setup(function() note("setup outer") end)
  teardown(function() note("teardown outer"); print(table.concat(log, ",")) end)
  before_each(function() note("before outer") end)
  after_each(function() note("after outer") end)

  it("first", function() note("it first") end)

  describe("inner", function()
    lazy_setup(function() note("lazy inner") end)
    before_each(function() note("before inner") end)
    after_each(function() note("after inner") end)
    it("second", function()
      note("it second")
      finally(function() note("finally second") end)
    end)
  end)
end)
