import Testing

@testable import LuaKit

/// The state's allocator: small blocks from free lists by size class,
/// larger ones from malloc (SmallBlocks.c), and a block that grows or
/// shrinks past a class or past the limit between the two keeps its bytes.
@Suite struct LuaAllocatorTests {
  @Test func stringsOfEverySizeKeepTheirBytes() throws {
    let state = try LuaState()
    // Each string is built, dropped and rebuilt between collections, so
    // later ones reuse the blocks of freed ones of the same class.
    let source = """
      local kept = {}
      for round = 1, 3 do
        for n = 1, 1100 do
          local s = string.rep(string.char(65 + n % 26), n) .. round
          if round < 3 then kept[n] = nil else kept[n] = s end
        end
        collectgarbage()
      end
      for n = 1, 1100 do
        local s = kept[n]
        if #s ~= n + 1 or s:sub(1, 1) ~= string.char(65 + n % 26) or s:sub(-1) ~= "3" then return n end
      end
      return 0
      """
    #expect(try run(source, in: state) == .integer(0))
  }

  @Test func tablesThatGrowAndShrinkAcrossTheLimitKeepTheirEntries() throws {
    let state = try LuaState()
    // A table's parts are reallocated as it grows (16 bytes, then 32, ...
    // past 512 into malloc's) and again when a collection shrinks it.
    let source = """
      local t, h = {}, {}
      for i = 1, 3000 do
        t[i] = i * 3
        h["k" .. i] = i
        if i % 97 == 0 then
          for j = 1, i do if t[j] ~= j * 3 or h["k" .. j] ~= j then return "grew", i, j end end
        end
      end
      for i = 3000, 5, -1 do t[i] = nil h["k" .. i] = nil end
      collectgarbage()
      collectgarbage()
      t[#t + 1] = "after"
      for j = 1, 4 do if t[j] ~= j * 3 or h["k" .. j] ~= j then return "shrank", j end end
      return t[5] == "after" and next(h, nil) ~= nil and "kept"
      """
    #expect(try run(source, in: state) == .string("kept"))
  }

  @Test func theBytesInUseAreTheBytesLuaCounts() throws {
    let state = try LuaState()
    // Blocks of every class and of malloc's, freed and reused, resized
    // across classes: the count of bytes in use (which the memory limit
    // reads) stays what Lua itself counts it asked for.
    let source = """
      local junk = {}
      for i = 1, 20000 do junk[i] = { i, tostring(i), string.rep("x", i % 700) } end
      for i = 1, 20000, 2 do junk[i] = nil end
      collectgarbage()
      return collectgarbage("count") * 1024
      """
    let counted = try run(source, in: state)
    #expect(counted == .number(Double(state.memoryInUse)))
  }
}
