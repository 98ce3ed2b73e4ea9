--[[ include.lua: the pandoc filter that reads the stages' code and the measurements into the deck;
slides/build.sh runs it from the repository root. README.md ("Slides") has the syntax: code blocks
{.cuda file=F function=NAME} (that function, whole) and {.diff step=NN lines="A-B"} (what make diff
STEP=NN prints, or part of it); the divs harris and harrisplot (bench/harris.py on the newest
bench/*/results.csv), variants, counters, measured, allreduce and allreduceplot (slides/tables.py
on the newest bench/*/variants.csv, metrics/*/metrics.csv, bench/*/allreduce.csv). No CSV is read
here: the scripts print Markdown, read back with pandoc.read. A table is set \small, the paragraph
after it (its note) \scriptsize; where a CSV or a script is missing, or the script fails, one line
names the command that makes the block. Pandoc makes frames with code fragile; preamble.tex and
fontcheck.py check what comes out. ]]

local function fail(msg) io.stderr:write('make slides: ' .. msg .. '\n'); os.exit(1) end

local function read_lines(path)
  local f, lines = io.open(path) or fail('cannot read ' .. path), {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  return lines
end

-- The function `name` of `file`: its definition is the line in column 0 that has `name(` and does
-- not end with `;`; it takes the comment lines right above, and ends at the first `}` in column 0.
local function extract(file, name)
  local lines = read_lines(file)
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
  local text = pandoc.pipe('sh', { '-c', 'bash common/diff.sh --color=never "$0" | tail -n +3 | '
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

---------------------------------------------------------------------------------------------------
-- The measurements: a script's Markdown, or one line saying what makes it.

local PY = os.getenv('SLIDES_PYTHON') or 'python3' -- build.sh: one that imports matplotlib
local HARRIS = os.getenv('SLIDES_HARRIS') or 'bench/harris.py' -- another, to test the placeholder

local function newest(glob) -- the newest file matching glob, or nil
  local ls = io.popen('ls -t ' .. glob .. ' 2>/dev/null')
  local path = ls:read('l')
  ls:close()
  return path
end

local function latex(s) return pandoc.RawBlock('latex', s) end

local function placeholder(command)
  return latex('\\par\\smallskip{\\centering\\small\\emph{Not made yet:} \\texttt{'
    .. command:gsub('[_%%&#$]', '\\%0') .. '}\\par}')
end

-- Only the columns of t whose heads are in the list keep ("A,B"), in the table's order.
local function only(t, keep)
  local want, cols = {}, {}
  for name in keep:gmatch('[^,]+') do want[name:match('^%s*(.-)%s*$')] = true end
  for k, c in ipairs(t.head.rows[1].cells) do
    if want[pandoc.utils.stringify(c.contents)] then cols[#cols + 1] = k end
  end
  local function pick(list)
    local out = {}
    for _, k in ipairs(cols) do out[#out + 1] = list[k] end
    return out
  end
  t.colspecs = pick(t.colspecs)
  for _, r in ipairs(t.head.rows) do r.cells = pick(r.cells) end
  for _, body in ipairs(t.bodies) do
    for _, r in ipairs(body.body) do r.cells = pick(r.cells) end
  end
  return t
end

-- A Markdown table as a booktabs tabular, \small, at its natural width; wider than the line, its
-- widest left-aligned column wraps (tabularx), and if still too wide it is shrunk, where
-- fontcheck.py then catches text below 8 pt (\decktable). A head of two words or more takes two
-- lines; a cell followed by empty cells only (harris.py's "not measured") spans them.
local function tabular(t, keep)
  if keep then t = only(t, keep) end
  local ALIGN = { AlignRight = 'r', AlignCenter = 'c' }
  local cols, long, width = {}, nil, {}
  for k, spec in ipairs(t.colspecs) do cols[k] = ALIGN[spec[1]] or 'l' end
  local function head(c, k) -- a head of two words or more on two lines, the longer one shortest
    local text, best = pandoc.utils.stringify(c.contents), nil
    local esc = function(s) return (s:gsub('[%%&#_$]', '\\%0'):gsub('%^', '\\^{}')) end
    for at in text:gmatch('() ') do
      local cost = math.max(at - 1, #text - at)
      if #text > 9 and (not best or cost <= best[1]) then best = { cost, at } end
    end
    width[k] = math.max(width[k] or 0, best and best[1] or #text)
    if not best then return esc(text) end
    return '\\begin{tabular}[b]{@{}' .. cols[k] .. '@{}}' .. esc(text:sub(1, best[2] - 1))
      .. '\\\\' .. esc(text:sub(best[2] + 1)) .. '\\end{tabular}'
  end
  local function row(r) -- a cell followed by empty ones only spans them
    local cells, n = {}, #r.cells
    for k, c in ipairs(r.cells) do
      local text = pandoc.utils.stringify(c.contents)
      local rest = k < n
      for j = k + 1, n do rest = rest and pandoc.utils.stringify(r.cells[j].contents) == '' end
      local s = pandoc.write(pandoc.Pandoc(c.contents), 'latex'):gsub('%s*\n%s*', ' ')
      if rest and text ~= '' then
        cells[#cells + 1] = '\\multicolumn{' .. (n - k + 1) .. '}{l}{' .. s .. '}'
        break
      end
      width[k] = math.max(width[k] or 0, #text)
      cells[#cells + 1] = s
    end
    return table.concat(cells, ' & ') .. '\\\\'
  end
  local out = {}
  for _, r in ipairs(t.head.rows) do
    local cells = {}
    for k, c in ipairs(r.cells) do cells[k] = head(c, k) end
    out[#out + 1] = table.concat(cells, ' & ') .. '\\\\'
  end
  out[#out + 1] = '\\midrule'
  for _, body in ipairs(t.bodies) do
    for _, r in ipairs(body.body) do out[#out + 1] = row(r) end
  end
  for k in ipairs(cols) do -- the widest column wraps, if the table is too wide
    if not long or (width[k] or 0) > (width[long] or 0) then long = k end
  end
  local body = '\\toprule\n' .. table.concat(out, '\n') .. '\n\\bottomrule'
  local wrapped = { table.unpack(cols) }
  wrapped[long] = '>{\\' .. (cols[long] == 'r' and 'raggedleft' or 'raggedright')
    .. '\\arraybackslash}X'
  return latex('\\decktable{\\begin{tabular}{@{}' .. table.concat(cols) .. '@{}}' .. body
    .. '\\end{tabular}}{\\begin{tabularx}{\\linewidth}{@{}' .. table.concat(wrapped) .. '@{}}'
    .. body .. '\\end{tabularx}}')
end

-- Inline code as plain text: a note is \scriptsize, where \texttt would print below 8 pt.
local function plain(inlines)
  return pandoc.walk_inline(pandoc.Span(inlines), { Code = function(c) return pandoc.Str(c.text) end })
    .content
end

-- Runs PY with args; its Markdown as blocks: tables \small, other paragraphs \scriptsize grey
-- (as they are, with text=true). When the script fails: the placeholder naming `missing`, or,
-- without one, the build fails. columns: the table's columns to keep ("A,B", by their heads).
local function markdown(args, missing, columns, text)
  local ok, out = pcall(pandoc.pipe, PY, args, '')
  if not ok and not missing then fail(table.concat(args, ' ') .. ' failed (its message is above)') end
  if not ok then
    io.stderr:write('make slides: warning: ' .. PY .. ' ' .. table.concat(args, ' ') .. ' failed\n')
    return placeholder(missing)
  end
  local blocks = {}
  for _, b in ipairs(pandoc.read(out, 'markdown').blocks) do
    if b.t == 'Table' then
      blocks[#blocks + 1] = tabular(b, columns)
    elseif (b.t == 'Para' or b.t == 'Plain') and not text then
      blocks[#blocks + 1] = latex('{\\scriptsize\\color{deckgray}')
      blocks[#blocks + 1] = pandoc.Plain(plain(b.content))
      blocks[#blocks + 1] = latex('\\par}')
    else
      blocks[#blocks + 1] = b
    end
  end
  return blocks
end

-- bench/harris.py on the newest results.csv: the speed-up table, one stage's row, or the plot.
local function harris(a)
  local csv = newest('bench/*/results.csv')
  if not csv then return placeholder('make bench') end
  local args = { HARRIS, 'markdown', csv }
  if a.n then args[#args + 1], args[#args + 2] = '--n', a.n end
  if a.stage then args[#args + 1], args[#args + 2] = '--stage', a.stage end
  if a.without then args[#args + 1], args[#args + 2] = '--without', a.without end
  local command = 'python3 ' .. table.concat(args, ' ')
  if not io.open(HARRIS) then return placeholder(command) end
  return markdown(args, command, a.columns)
end

local function harrisplot(a)
  local csv = newest('bench/*/results.csv')
  if not csv then return placeholder('make bench') end
  local png = 'build/slides/harris.png'
  local args = { HARRIS, 'png', csv, '-o', png }
  if a.without then args[#args + 1], args[#args + 2] = '--without', a.without end
  local command = 'python3 ' .. table.concat(args, ' ')
  os.remove(png)
  if not io.open(HARRIS) or not pcall(pandoc.pipe, PY, args, '')
    or not io.open(png) then
    return placeholder(command)
  end
  return latex('\\begin{center}\\includegraphics[width=\\linewidth,height=0.78\\textheight,'
    .. 'keepaspectratio]{' .. png .. '}\\par{\\scriptsize\\color{deckgray}'
    .. command:gsub('[_%%&#$]', '\\%0') .. '}\\end{center}')
end

-- slides/tables.py COMMAND CSV [ARGS]: the newest CSV of glob, else the line naming `make`.
local function tables(command, glob, make, ...)
  local csv = newest(glob)
  if not csv then return placeholder(make) end
  return markdown({ 'slides/tables.py', command, csv, ... }, nil, nil, command == 'allreduceplot')
end

local DIVS = {
  harris = harris,
  harrisplot = harrisplot,
  variants = function(a) return tables('variants', 'bench/*/variants.csv', 'make variants',
    a.names or fail('variants: names="A,B" missing')) end,
  counters = function(a) return tables('counters', 'metrics/*/metrics.csv', 'make metrics',
    a.stage or fail('counters: stage= missing'), a.metrics or fail('counters: metrics= missing'))
    end,
  measured = function() return tables('measured', 'bench/*/results.csv', 'make bench') end,
  allreduce = function() return tables('allreduce', 'bench/*/allreduce.csv',
    'make bench-step09') end,
  allreduceplot = function() return tables('allreduceplot', 'bench/*/allreduce.csv',
    'make bench-step09') end,
}
function Div(d)
  for class, make in pairs(DIVS) do
    if d.classes:includes(class) then return make(d.attributes) end
  end
end
