-- Shared by the specs that draw: whether Graphviz (`dot`, installed by
-- scripts/bootstrap) reads a DOT drawing without a word on standard error.
-- Returns true, or false and what it said.
return function(drawing)
  local errors = os.tmpname()
  local pipe = assert(io.popen("dot -Tsvg -o /dev/null 2>" .. errors, "w"))
  pipe:write(drawing)
  local ok = pipe:close()
  local file = assert(io.open(errors))
  local said = file:read("a")
  file:close()
  os.remove(errors)
  return ok == true and said == "", said
end
