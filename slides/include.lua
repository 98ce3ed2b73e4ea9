--[[ include.lua: the pandoc filter that fills the deck in with the stages' code and measurements;
slides/build.sh runs it from the repository root. README.md ("Slides") has the syntax: code blocks
{.cuda file=F function=NAME} (that function, whole, or its lines="A-B"), {.diff step=NN lines="A-B"}
(what make diff STEP=NN prints, or part of it), the divs of measurements (slides/tables.py), and
speaker notes (::: notes, and the metadata's title-note). Each code block gets the largest size of
preamble.tex's three that its longest line and its line count allow (size="9" forces the
smallest). ]]

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

-- Lines A to B of text (range "A-B" or "A-"), or all of it.
local function part(text, range, what)
  if not range then return text end
  local a, b = range:match('^(%d+)%-(%d*)$')
  if not a then fail(what .. ': lines= takes A-B or A-, not ' .. range) end
  local out, k = {}, 0
  for line in (text .. '\n'):gmatch('(.-)\n') do
    k = k + 1
    if k >= tonumber(a) and (b == '' or k <= tonumber(b)) then out[#out + 1] = line end
  end
  return #out > 0 and table.concat(out, '\n') or fail(what .. ': no lines ' .. range .. ' in it')
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
    code = part(extract(file, name), b.attributes.lines, file .. ' ' .. name)
  elseif step then
    code, class = diff(step, b.attributes.lines), 'diff'
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

