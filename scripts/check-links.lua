-- Checks that every relative link in the given Markdown files resolves: the
-- file or folder exists, and an #anchor names a heading of the page it
-- points to, slugged as GitHub slugs headings. Run by scripts/check-links.
-- Prints one line per broken link and ends with "N links, N broken".

local files = { ... }

local function read(path)
  local file = io.open(path, "rb")
  if not file then return nil end
  local text = file:read("a")
  file:close()
  return text
end

local function exists(path)
  local file = io.open(path, "rb")
  if file then file:close() return true end
  return false
end

-- The text outside fenced code blocks, with each fenced line blanked so
-- line numbers stay, and the headings found outside them.
local function prose(text)
  local lines, headings, fence = {}, {}, nil
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    local marker = line:match("^%s*(```+)") or line:match("^%s*(~~~+)")
    if fence then
      if marker and marker:sub(1, 1) == fence:sub(1, 1) and #marker >= #fence then fence = nil end
      lines[#lines + 1] = ""
    elseif marker then
      fence = marker
      lines[#lines + 1] = ""
    else
      lines[#lines + 1] = line
      local heading = line:match("^#+%s+(.-)%s*#*%s*$")
      if heading then headings[#headings + 1] = heading end
    end
  end
  return table.concat(lines, "\n"), headings
end

-- `text` without its code spans (a run of backticks up to the next run of
-- the same length), each replaced by spaces so positions stay.
local function withoutCode(text)
  local out, at = {}, 1
  while true do
    local open, openEnd = text:find("`+", at)
    if not open then break end
    local run = openEnd - open + 1
    local close, closeEnd = text:find("`+", openEnd + 1)
    while close and closeEnd - close + 1 ~= run do
      close, closeEnd = text:find("`+", closeEnd + 1)
    end
    if not close then break end
    out[#out + 1] = text:sub(at, open - 1)
    out[#out + 1] = text:sub(open, closeEnd):gsub("[^\n]", " ")
    at = closeEnd + 1
  end
  out[#out + 1] = text:sub(at)
  return table.concat(out)
end

-- GitHub's anchor for a heading: its text without markup, lower case,
-- every character but letters, digits, spaces, '-' and '_' dropped (bytes
-- beyond ASCII kept, as GitHub keeps letters), each space a '-'.
local function slug(heading)
  local text = heading:gsub("!?%[(.-)%]%b()", "%1")
  text = text:lower():gsub("[^%w%s%-_\128-\255]", ""):gsub("%s", "-")
  return text
end

local anchorsOf = {}
local function anchors(path)
  if anchorsOf[path] == nil then
    local text = read(path)
    local set = false
    if text then
      set = {}
      local _, headings = prose(text)
      local seen = {}
      for _, heading in ipairs(headings) do
        local base = slug(heading)
        local name = base
        if seen[base] then name = base .. "-" .. seen[base] end
        seen[base] = (seen[base] or 0) + 1
        set[name] = true
      end
    end
    anchorsOf[path] = set
  end
  return anchorsOf[path]
end

local function folder(path)
  return path:match("^(.*)/[^/]*$") or "."
end

local function join(base, relative)
  local parts = {}
  for part in (base .. "/" .. relative):gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

local total, broken = 0, 0
for _, path in ipairs(files) do
  local text = read(path)
  if not text then
    print(path .. ": cannot read the file")
    broken = broken + 1
  else
    local body = withoutCode((prose(text)))
    for start, target in body:gmatch("()%]%(<?([^%s%)>]*)>?[^%)]*%)") do
      if not target:match("^%a[%w+.-]*:") then
        total = total + 1
        local line = select(2, body:sub(1, start):gsub("\n", "")) + 1
        local file, anchor = target:match("^([^#]*)#?(.*)$")
        local resolved = file == "" and path or join(folder(path), file)
        local problem
        if not exists(resolved) then
          problem = "no file " .. resolved
        elseif anchor ~= "" then
          local set = anchors(resolved)
          if not resolved:match("%.md$") or not set or not set[anchor] then
            problem = "no heading #" .. anchor .. " in " .. resolved
          end
        end
        if problem then
          broken = broken + 1
          print(("%s:%d: broken link (%s): %s"):format(path, line, target, problem))
        end
      end
    end
  end
end
print(("%d links, %d broken"):format(total, broken))
os.exit(broken == 0 and 0 or 1)
