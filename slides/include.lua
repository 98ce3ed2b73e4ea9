--[[ include.lua: the pandoc filter that fills the deck in with the stages' code and measurements;
slides/build.sh runs it from the repository root. docs/teaching.md ("Slides") has the syntax: code blocks
{.cuda file=F function=NAME} (that function, whole, or a part: lines="A-B", from="TEXT" to="TEXT"),
{.diff step=NN} (what make diff STEP=NN prints, or a part, the same way), the divs of
measurements (slides/tables.py), and speaker notes (::: notes, and the metadata's title-note).
Each code block gets the largest size of preamble.tex's three that its longest line and its line
count allow (size="9" forces the smallest). ]]

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

-- `make diff STEP=step` without its ---/+++ lines.
local function diff(step)
  local text = pandoc.pipe('sh', { '-c', 'bash tools/diff.sh --color=never "$0" | tail -n +3',
    step }, '')
  return text ~= '' and text or fail('diff ' .. step .. ': empty')
end

-- A part of text: its lines A to B (range "A-B" or "A-"), or from the first line that contains
-- the string `from` to the next that contains `to` (either may be left out: the first, the last
-- line), so that a part stays the same when lines are added above it. All of it without either.
local function part(text, attrs, what)
  local range, from, to = attrs.lines, attrs.from, attrs['to']
  local lines = {}
  for line in (text:gsub('\n+$', '') .. '\n'):gmatch('(.-)\n') do lines[#lines + 1] = line end
  local a, b = 1, #lines
  if range then
    local x, y = range:match('^(%d+)%-(%d*)$')
    if not x then fail(what .. ': lines= takes A-B or A-, not ' .. range) end
    a, b = tonumber(x), y ~= '' and tonumber(y) or #lines
  end
  local function find(s, start)
    for k = start, #lines do
      if lines[k]:find(s, 1, true) then return k end
    end
    fail(what .. ': no line contains "' .. s .. '"')
  end
  if from then a = find(from, a) end
  if to then b = find(to, a) end
  if a > b or a > #lines then fail(what .. ': no lines ' .. a .. '-' .. b .. ' in it') end
  return table.concat(lines, '\n', a, math.min(b, #lines))
end

-- preamble.tex's code size for a block: A (10 pt, 80 columns), B (10 pt, 90) or C (9 pt, 100):
-- 10 pt only for a block of at most 14 lines (a frame holds 17 at 10 pt, 19 at 9 pt, under its
-- title), which leaves it room for a line or two of text.
local function size(text, force)
  local lines, widest = 0, 0
  for line in (text:gsub('\n+$', '') .. '\n'):gmatch('(.-)\n') do
    local expanded = line:gsub('\t', '    ')
    lines = lines + 1
    widest = math.max(widest, utf8.len(expanded) or #expanded)
  end
  if force == '9' or lines > 14 or widest > 90 then return '\\deckcodeC' end
  return widest > 80 and '\\deckcodeB' or '\\deckcodeA'
end

function CodeBlock(b)
  local file, step, code, class = b.attributes.file, b.attributes.step, nil, b.classes[1]
  if file then
    local name = b.attributes['function'] or fail(file .. ': a code block needs function="NAME"')
    code = part(extract(file, name), b.attributes, file .. ' ' .. name)
  elseif step then
    code, class = part(diff(step), b.attributes, 'diff ' .. step), 'diff'
  else
    code = b.text
  end
  return { pandoc.RawBlock('latex', '\\begingroup' .. size(code, b.attributes.size)
      .. (step and '\\diffcolors' or '')),
    pandoc.CodeBlock(code, { class = class }),
    pandoc.RawBlock('latex', '\\endgroup') }
end

local PY = os.getenv('SLIDES_PYTHON') or 'python3' -- build.sh: one that imports matplotlib

-- An empty div is one of measurements, ::: {.CLASS NAME=VALUE ...}: slides/tables.py CLASS
-- NAME=VALUE... prints its LaTeX (a class it does not know fails the build).
local function measured(el, make)
  local args = { 'slides/tables.py', el.classes[1] }
  for k, v in pairs(el.attributes) do args[#args + 1] = k .. '=' .. v end
  local ok, out = pcall(pandoc.pipe, PY, args, '')
  return ok and make('latex', (out:gsub('%s+$', '')))
    or fail(PY .. ' ' .. table.concat(args, ' ') .. ' failed (its message is above)')
end

-- ::: notes (speaker notes): preamble.tex's \decknotes, a note page per frame, its last slide's.
function Div(d)
  if d.classes[1] == 'notes' then
    local out = { pandoc.RawBlock('latex', '\\decknotes{%') }
    for _, b in ipairs(d.content) do out[#out + 1] = b end
    out[#out + 1] = pandoc.RawBlock('latex', '}')
    return out
  end
  if #d.content > 0 or not d.classes[1] then return nil end
  return measured(d, pandoc.RawBlock)
end

-- The title page's note: the metadata field title-note.
function Meta(m)
  local note = m['title-note']
  if not note then return nil end
  local ok, latex = pcall(pandoc.write, pandoc.Pandoc(note), 'latex') -- blocks, or inlines
  if not ok then latex = pandoc.write(pandoc.Pandoc({ pandoc.Plain(note) }), 'latex') end
  -- include-before, which pandoc puts right after the title frame: a \note there is the title's
  -- (\note itself: Beamer's ignorenonframetext skips any other command outside a frame)
  m['include-before'] = pandoc.MetaBlocks({ pandoc.RawBlock('latex',
    '\\note{% the title page\'s note (title-note)\n' .. latex .. '}') })
  return m
end

