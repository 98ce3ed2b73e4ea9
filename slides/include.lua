--[[ include.lua: the pandoc filter that fills the deck in with the stages' code and measurements;
slides/build.sh runs it from the repository root. README.md ("Slides") has the syntax: code blocks
{.cuda file=F function=NAME} (that function, whole), {.diff step=NN lines="A-B"} (what make diff
STEP=NN prints, or part of it), and the divs of measurements (slides/tables.py). ]]

local function fail(msg) io.stderr:write('make slides: ' .. msg .. '\n'); os.exit(1) end

-- The function `name` of `file`: its definition is the line in column 0 that has `name(` and does
-- not end with `;`; it takes the comment lines right above, and ends at the first `}` in column 0.
local function extract(file, name)
  local f, lines = io.open(file) or fail('cannot read ' .. file), {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  for i, line in ipairs(lines) do
    if line:match('^[%a_].*[%s*]' .. name .. '%(') and not line:match(';%s*$') then
      local first, last = i, i
      while first > 1 and lines[first - 1]:match('^%s*/?[/*]') do first = first - 1 end
      while lines[last] and not lines[last]:match('^}') do last = last + 1 end
      return table.concat(lines, '\n', first, lines[last] and last or
        fail(file .. ': function ' .. name .. ' has no closing "}" in column 0'))
    end
  end
  fail(file .. ': no function "' .. name .. '" (a definition that starts in column 0)')
end

-- `make diff STEP=step` without its ---/+++ lines; range "A-B" or "A-": only its lines A to B.
local function diff(step, range)
  local a, b = (range or '1-'):match('^(%d+)%-(%d*)$')
  if not a then fail('diff ' .. step .. ': lines= takes A-B or A-, not ' .. range) end
  local text = pandoc.pipe('sh', { '-c', 'bash tools/diff.sh --color=never "$0" | tail -n +3 | '
    .. 'sed -n "$1,$2p"', step, a, b ~= '' and b or '$' }, '')
  return text ~= '' and text or fail('diff ' .. step .. ': no lines ' .. (range or '') .. ' in it')
end

function CodeBlock(b)
  local file, step = b.attributes.file, b.attributes.step
  if file then
    local name = b.attributes['function'] or fail(file .. ': a code block needs function="NAME"')
    return pandoc.CodeBlock(extract(file, name), { class = b.classes[1] })
  elseif step then
    return { pandoc.RawBlock('latex', '\\begingroup\\diffcolors'),
      pandoc.CodeBlock(diff(step, b.attributes.lines), { class = 'diff' }),
      pandoc.RawBlock('latex', '\\endgroup') }
  end
end

local PY = os.getenv('SLIDES_PYTHON') or 'python3' -- build.sh: one that imports matplotlib

-- An empty div is one of measurements, ::: {.CLASS NAME=VALUE ...}: slides/tables.py CLASS
-- NAME=VALUE... prints its LaTeX (a class it does not know fails the build).
function Div(d)
  if #d.content > 0 or not d.classes[1] then return nil end
  local args = { 'slides/tables.py', d.classes[1] }
  for k, v in pairs(d.attributes) do args[#args + 1] = k .. '=' .. v end
  local ok, out = pcall(pandoc.pipe, PY, args, '')
  return ok and pandoc.RawBlock('latex', out)
    or fail(PY .. ' ' .. table.concat(args, ' ') .. ' failed (its message is above)')
end
