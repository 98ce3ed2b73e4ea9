--[[ include.lua: the pandoc filter that pulls the code, the diffs and the numbers into the deck.

Run by slides/build.sh from the repository root. What it understands in slides/reduction.md:

  ```{.cuda file="step04_smem/reduce.cu" region="kernel"}
  ```                      the lines between `// BEGIN kernel` and `// END kernel` of that file
  ```{.diff step="04"}
  ```                      `bash common/diff.sh --color=never 04`, exactly what `make diff STEP=04`
                           prints: removed lines on red, added lines on green, code highlighted
  ::: {.numbers stage="step05_segmented"}
  :::                      that stage's measured numbers (n = 2^24 and 2^28, else its largest n)
  ::: {.cubtable}          every stage against CUB, at n = 2^24 and 2^28
  ::: {.benchplot}         the benchmark plot, or a placeholder saying to run `make bench`
  ::: {.measured}          one line: which GPU, which CSV, what its peak is

Nothing is ever pasted: the code is read from the stage sources and the numbers from
bench/<gpu>/results.csv each time the deck is built (SLIDES_CSV and SLIDES_PLOT, from build.sh).

Overflow: Beamer clips a frame silently, so every frame is measured here before LaTeX sees it.
A code line wider than MAX_COLS fails the build, naming the file and line. A frame with one code
block or diff that would be taller than the frame is split into frames titled "... (2/3)": a
region at its statement boundaries (after a blank line, between the statements of a function body;
a split inside a loop costs more than one more frame), a diff at its hunks, else where the code
breaks well. Every frame then ends with \slidecheckend{title} (slides/preamble.tex), and build.sh
fails the build if LaTeX put any frame's content into the footline or any code line past the
frame's right edge: the estimate here decides the splits, LaTeX has the last word.
]]

local MAX_COLS = 101 -- clang-format's ColumnLimit (100) plus the diff's +/- column
local FRAME_UNITS = 24 -- a frame title and 23 code lines (measured: 9 pt to spare above the footline)
local TEXT_LINE = 1.6 -- one line of body text, in code lines
local CHARS_PER_LINE = 80 -- body text characters per line, roughly

local shown_code, shown_diff = {}, {} -- what the deck shows of each stage, to check that none is left out

local here = PANDOC_SCRIPT_FILE and PANDOC_SCRIPT_FILE:match('^(.*)/[^/]*$') or 'slides'
local SYNTAX = here .. '/cuda.xml'
local STYLE = here .. '/highlight.theme'

local function fail(msg)
  io.stderr:write('slides: ' .. msg .. '\n')
  os.exit(1)
end

local function warn(msg)
  io.stderr:write('slides: WARNING: ' .. msg .. '\n')
end

local function read_lines(path)
  local f = io.open(path, 'r')
  if not f then
    fail('cannot read ' .. path .. ' (run make slides from the repository root)')
  end
  local lines = {}
  for line in f:lines() do
    lines[#lines + 1] = line
  end
  f:close()
  return lines
end

local function split_lines(text)
  local lines = {}
  for line in (text .. '\n'):gmatch('(.-)\n') do
    lines[#lines + 1] = line
  end
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

local function expand_tabs(line)
  return (line:gsub('\t', '    '))
end

-- The lines strictly between `// BEGIN <region>` and `// END <region>`.
local function region_lines(file, region)
  local lines = read_lines(file)
  local first, last
  for i, line in ipairs(lines) do
    if line:match('^%s*//%s*BEGIN%s+' .. region .. '%s*$') then
      if first then
        fail(file .. ': two "// BEGIN ' .. region .. '" markers')
      end
      first = i
    elseif line:match('^%s*//%s*END%s+' .. region .. '%s*$') then
      last = i
    end
  end
  if not first or not last or last < first then
    fail(file .. ': no "// BEGIN ' .. region .. '" ... "// END ' .. region .. '" region')
  end
  local out = {}
  for i = first + 1, last - 1 do
    out[#out + 1] = expand_tabs(lines[i])
  end
  while #out > 0 and out[#out]:match('^%s*$') do
    out[#out] = nil
  end
  while #out > 0 and out[1]:match('^%s*$') do
    table.remove(out, 1)
  end
  if #out == 0 then
    fail(file .. ': region "' .. region .. '" is empty')
  end
  return out
end

local function utf8_len(s)
  return utf8.len(s) or #s
end

local function check_width(lines, what)
  for i, line in ipairs(lines) do
    if utf8_len(line) > MAX_COLS then
      fail(string.format('%s, line %d: %d columns, more than the %d a slide shows:\n  %s', what,
        i, utf8_len(line), MAX_COLS, line))
    end
  end
end

---------------------------------------------------------------------------------------------------
-- Splitting a block of lines into chunks of at most `budget` lines, at the best places.

-- Cost of starting a new chunk at line i of a code region (nil: never here).
local function code_break_cost(lines, i)
  local prev, cur = lines[i - 1], lines[i]
  if cur:match('^%s*$') then
    return nil -- a chunk never starts with a blank line (it starts after it)
  end
  if prev:match('^%s*$') then
    return 0 -- after a blank line: between functions or paragraphs of code
  end
  if cur:match('^%s*[{}]') or cur:match('^%s*%)') then
    return nil
  end
  local p = prev:gsub('%s*/%*.-%*/%s*$', ''):gsub('%s*//.*$', '')
  if prev:match('^%s*/%*') or prev:match('^%s*//') or prev:match('^%s*%*') then
    return nil -- right after a comment line: it belongs to the code below it
  end
  if not (p:match('[;{}]%s*$')) then
    return nil -- inside a statement
  end
  local indent = #cur:match('^(%s*)')
  if indent <= 4 then
    return 2 -- a statement of the function body
  end
  return 50 + indent -- inside a loop or branch: worse than one more slide
end

-- Cost of starting a new chunk at line i of a diff (kinds: 'file', 'hunk', ' ', '-', '+').
local function diff_break_cost(kinds, lines, i)
  local prev, cur = kinds[i - 1], kinds[i]
  if cur == 'file' then
    return nil
  end
  if cur == 'hunk' then
    return 0
  end
  if prev == 'file' or prev == 'hunk' then
    return nil
  end
  if cur == ' ' and lines[i]:match('^%s*$') then
    return nil -- would open the slide with an empty line
  end
  if prev == ' ' and lines[i - 1]:match('^%s*$') then
    return 1 -- after an empty context line
  end
  -- elsewhere: where the code itself breaks well (not between an `if` and its body)
  local code = {}
  for j = 1, #lines do
    code[j] = lines[j]:sub(2)
  end
  local c = code_break_cost(code, i)
  local good = c ~= nil and c <= 2
  if prev ~= cur and (prev == ' ' or cur == ' ') then
    return good and 3 or 25 -- between context and a change
  end
  if prev == '-' and cur == '+' then
    return 20 -- between what was removed and what replaced it
  end
  return good and 8 + c or 60 -- inside a run of context, or of changes
end

-- Splits lines 1..n into chunks of at most `budget` lines (blank lines at a chunk's end do not
-- count: they are not shown) at the cheapest places: each chunk costs 40, so that one more slide
-- beats a split inside a loop body, and each place costs what cost_of(first line) says.
-- Returns a list of {first, last}, or nil.
local function split(n, budget, cost_of, is_blank)
  local INF = math.huge
  local best, from = {}, {}
  for i = 1, n + 1 do
    best[i] = INF
  end
  best[1] = 0 -- best[s]: the cheapest chunks covering lines 1..s-1, the next starting at s
  for start = 1, n do
    if best[start] < INF then
      local shown
      for stop = start, n do
        if not (is_blank and is_blank(stop)) then
          shown = stop
        end
        if shown and shown - start + 1 > budget then
          break
        end
        local s, c = stop + 1, 0
        if s <= n then
          c = cost_of(s)
        end
        if c and best[start] + 40 + c < best[s] then
          best[s], from[s] = best[start] + 40 + c, start
        end
      end
    end
  end
  if best[n + 1] == INF then
    return nil
  end
  local chunks, at = {}, n + 1
  while at > 1 do
    local first, last = from[at], at - 1
    while is_blank and last > first and is_blank(last) do
      last = last - 1
    end
    table.insert(chunks, 1, { first, last })
    at = first
  end
  return chunks
end

---------------------------------------------------------------------------------------------------
-- Highlighting a diff: each side (old = context + removed, new = context + added) is highlighted
-- as a whole file by pandoc itself, so a comment or a string that spans lines stays right.

local function highlight(lines)
  local fence = string.rep('~', 12)
  local md = fence .. ' {.cuda}\n' .. table.concat(lines, '\n') .. '\n' .. fence .. '\n'
  local tex = pandoc.pipe('pandoc', { '--from', 'markdown', '--to', 'latex',
    '--syntax-definition', SYNTAX, '--highlight-style', STYLE }, md)
  local body = tex:match('\\begin{Highlighting}%[%]\n(.-)\n?\\end{Highlighting}')
  if not body then
    fail('pandoc did not highlight the diff; its output was:\n' .. tex)
  end
  local out = split_lines(body)
  while #out < #lines do -- pandoc drops trailing empty lines
    out[#out + 1] = ''
  end
  if #out ~= #lines then
    fail(string.format('highlighting turned %d lines into %d', #lines, #out))
  end
  return out
end

-- Plain text for a Verbatim environment with commandchars=\\\{\}.
local function verb_escape(s)
  return (s:gsub('[\\{}]', { ['\\'] = '\\textbackslash{}', ['{'] = '\\{', ['}'] = '\\}' }))
end

local function diff_lines(step)
  local text = pandoc.pipe('bash', { 'common/diff.sh', '--color=never', step }, '')
  local lines = split_lines(text)
  if #lines == 0 then
    fail('common/diff.sh ' .. step .. ' printed nothing: stage ' .. step ..
      ' has the same code as the stage before it')
  end
  local kinds, old, new, old_at, new_at = {}, {}, {}, {}, {}
  local in_hunk = false
  for i, line in ipairs(lines) do
    line = expand_tabs(line)
    lines[i] = line
    local c = line:sub(1, 1)
    local kind
    if not in_hunk and (line:match('^%-%-%- ') or line:match('^%+%+%+ ')) then
      kind = 'file'
    elseif line:match('^@@ ') then
      kind, in_hunk = 'hunk', true
    elseif c == ' ' or c == '-' or c == '+' or line == '' then
      kind = (line == '') and ' ' or c
      local code = line:sub(2)
      if kind ~= '+' then
        old[#old + 1] = code
        old_at[i] = #old
      end
      if kind ~= '-' then
        new[#new + 1] = code
        new_at[i] = #new
      end
    else
      kind = 'note' -- "\ No newline at end of file"
    end
    kinds[i] = kind
  end
  local hl_old, hl_new = highlight(old), highlight(new)
  local tex = {}
  for i, line in ipairs(lines) do
    local k = kinds[i]
    if k == 'file' then
      tex[i] = (line:sub(1, 1) == '-' and '\\DiffOldFile{' or '\\DiffNewFile{') ..
          verb_escape(line) .. '}'
    elseif k == 'hunk' then
      tex[i] = '\\DiffHunk{' .. verb_escape(line) .. '}'
    elseif k == 'note' then
      tex[i] = '\\DiffNote{' .. verb_escape(line) .. '}'
    elseif k == '-' then
      tex[i] = '\\DiffDel{' .. hl_old[old_at[i]] .. '}'
    elseif k == '+' then
      tex[i] = '\\DiffAdd{' .. hl_new[new_at[i]] .. '}'
    else
      tex[i] = '\\DiffCtx{' .. hl_new[new_at[i]] .. '}'
    end
  end
  return lines, kinds, tex
end

local function diff_block(tex, first, last)
  local body = {}
  for i = first, last do
    body[#body + 1] = tex[i]
  end
  return pandoc.RawBlock('latex',
    '\\begin{DiffVerbatim}\n' .. table.concat(body, '\n') .. '\n\\end{DiffVerbatim}')
end

---------------------------------------------------------------------------------------------------
-- The benchmark: bench/<gpu>/results.csv (gpu,stage,n,bytes,median_ms,min_ms,max_ms,gbps,
-- peak_gbps,peak_pct,ratio_to_cub,sum_ok), read the way bench/plot.py reads it: the median over
-- repeated rows, % of peak from the median peak.

local TABLE_N = { 1 << 24, 1 << 28 }
local bench -- nil: not read yet; false: no CSV

local function median(xs)
  table.sort(xs)
  local m = #xs
  if m == 0 then
    return nil
  end
  if m % 2 == 1 then
    return xs[(m + 1) // 2]
  end
  return (xs[m // 2] + xs[m // 2 + 1]) / 2
end

local function load_bench()
  if bench ~= nil then
    return bench
  end
  local path = os.getenv('SLIDES_CSV') or ''
  if path == '' then
    bench = false
    return bench
  end
  local lines = read_lines(path)
  local header = 'gpu,stage,n,bytes,median_ms,min_ms,max_ms,gbps,peak_gbps,peak_pct,ratio_to_cub,sum_ok'
  if lines[1] ~= header then
    fail(path .. ': unexpected header ' .. tostring(lines[1]))
  end
  local groups, peaks, gpu = {}, {}, nil
  for i = 2, #lines do
    if lines[i] ~= '' then
      local f = {}
      for field in (lines[i] .. ','):gmatch('([^,]*),') do
        f[#f + 1] = field
      end
      if #f ~= 12 then
        fail(string.format('%s, line %d: %d fields, not 12', path, i, #f))
      end
      gpu = gpu or f[1]
      local key = f[2] .. '@' .. f[3]
      local g = groups[key] or { stage = f[2], n = tonumber(f[3]), ms = {}, gbps = {}, ratio = {},
        ok = true }
      groups[key] = g
      g.ms[#g.ms + 1] = tonumber(f[5])
      g.gbps[#g.gbps + 1] = tonumber(f[8])
      if f[11] ~= '' then
        g.ratio[#g.ratio + 1] = tonumber(f[11])
      end
      g.ok = g.ok and f[12] == '1'
      peaks[#peaks + 1] = tonumber(f[9])
    end
  end
  local peak = median(peaks)
  local data = {}
  for _, g in pairs(groups) do
    data[g.stage] = data[g.stage] or {}
    local gbps = median(g.gbps)
    data[g.stage][g.n] = { ms = median(g.ms), gbps = gbps, pct = 100 * gbps / peak,
      ratio = median(g.ratio), ok = g.ok }
  end
  bench = { path = path, gpu = gpu, peak = peak, data = data }
  return bench
end

local function num(x)
  if x >= 100 then
    return string.format('%.0f', x)
  elseif x >= 10 then
    return string.format('%.1f', x)
  end
  return string.format('%.2f', x)
end

local function time(ms)
  if ms >= 1 then
    return num(ms) .. '\\,ms'
  end
  return num(ms * 1000) .. '\\,\\textmu s'
end

local function log2(n)
  local e = 0
  while n > 1 do
    n = n // 2
    e = e + 1
  end
  return e
end

local function bytes(n)
  local b, units = 4 * n, { 'B', 'KiB', 'MiB', 'GiB', 'TiB' }
  local u = 1
  while b >= 1024 and u < #units do
    b, u = b / 1024, u + 1
  end
  return string.format('%g\\,%s', b, units[u])
end

local function tex_escape(s)
  return (s:gsub('[\\{}_%%&#$^~]', {
    ['\\'] = '\\textbackslash{}', ['{'] = '\\{', ['}'] = '\\}', ['_'] = '\\_', ['%'] = '\\%',
    ['&'] = '\\&', ['#'] = '\\#', ['$'] = '\\$', ['^'] = '\\^{}', ['~'] = '\\~{}' }))
end

local function sizes_of(stage)
  local b = load_bench()
  local rows = b.data[stage] or {}
  local ns = {}
  for _, n in ipairs(TABLE_N) do
    if rows[n] then
      ns[#ns + 1] = n
    end
  end
  if #ns == 0 then -- a stage that stops early (one block): its two largest sizes
    local all = {}
    for n in pairs(rows) do
      all[#all + 1] = n
    end
    table.sort(all)
    for i = math.max(1, #all - 1), #all do
      ns[#ns + 1] = all[i]
    end
  end
  return ns, rows
end

local function no_bench_block()
  return pandoc.Para({ pandoc.Emph({ pandoc.Str('No measurements yet: run'), pandoc.Space(),
    pandoc.Code('make bench'), pandoc.Space(), pandoc.Str('on a GPU, then'), pandoc.Space(),
    pandoc.Code('make slides'), pandoc.Str('.') }) })
end

local function measured_on()
  local b = load_bench()
  return string.format('%s, peak %s\\,GB/s; median time, L2 flushed before each run; from '
    .. '\\texttt{%s}', tex_escape(b.gpu), num(b.peak), tex_escape(b.path))
end

local function numbers_block(stage)
  local b = load_bench()
  if not b then
    return { no_bench_block() }
  end
  local ns, rows = sizes_of(stage)
  if #ns == 0 then
    return { pandoc.Para({ pandoc.Emph({ pandoc.Str('No measurements of'), pandoc.Space(),
      pandoc.Code(stage), pandoc.Space(), pandoc.Str('in ' .. b.path .. '.') }) }) }
  end
  local t = { '\\begin{center}\\begin{tabular}{@{}lrrrr@{}}\\toprule',
    '$n$ & time & GB/s & \\% of peak & time / CUB\\\\\\midrule' }
  for _, n in ipairs(ns) do
    local r = rows[n]
    local ratio = r.ratio and string.format('%.2f', r.ratio) or '--'
    local bad = r.ok and '' or ' \\alert{(wrong sum)}'
    t[#t + 1] = string.format('$2^{%d}$ (%s)%s & %s & %s & %s & %s\\\\', log2(n), bytes(n), bad,
      time(r.ms), num(r.gbps), num(r.pct), ratio)
  end
  t[#t + 1] = '\\bottomrule\\end{tabular}\\par'
  t[#t + 1] = '{\\scriptsize\\color{gray}' .. measured_on() .. '}\\end{center}'
  return { pandoc.RawBlock('latex', table.concat(t, '\n')) }
end

local CUB_ROWS = {
  { 'step01_atomic_naive', '1: atomicAdd per element' },
  { 'step02_blocked', '2: tree in one block' },
  { 'step03_strided', '3: strided' },
  { 'step04_smem', '4: shared memory' },
  { 'step05_segmented', '5: segments, many blocks' },
  { 'step06_coarsened', '6: coarsened' },
  { 'step07_warp_shuffle', '7: warp shuffles' },
  { 'cub', 'CUB DeviceReduce::Sum' },
  { 'copy', 'cudaMemcpy (reads + writes)' },
}

local function cub_table()
  local b = load_bench()
  if not b then
    return { no_bench_block() }
  end
  local head = { '\\begin{center}\\small\\begin{tabular}{@{}l' .. string.rep('rrr', #TABLE_N) ..
    '@{}}\\toprule' }
  local h1, h2, rule = { 'stage' }, { '' }, {}
  for i, n in ipairs(TABLE_N) do
    h1[#h1 + 1] = string.format('\\multicolumn{3}{c}{$n = 2^{%d}$ (%s)}', log2(n), bytes(n))
    h2[#h2 + 1] = 'GB/s & \\% peak & time / CUB'
    rule[#rule + 1] = string.format('\\cmidrule(l){%d-%d}', 3 * i - 1, 3 * i + 1)
  end
  local t = head
  t[#t + 1] = table.concat(h1, ' & ') .. '\\\\' .. table.concat(rule)
  t[#t + 1] = table.concat(h2, ' & ') .. '\\\\\\midrule'
  local capped = {}
  for _, row in ipairs(CUB_ROWS) do
    local stage, label = row[1], row[2]
    local rows = b.data[stage]
    if rows then
      local cells = { label }
      local any = false
      for _, n in ipairs(TABLE_N) do
        local r = rows[n]
        if r then
          any = true
          local ratio = stage == 'cub' and '1.00' or
              (r.ratio and string.format('%.2f', r.ratio) or '--')
          local cell = string.format('%s & %s & %s', num(r.gbps), num(r.pct), ratio)
          if not r.ok then
            cell = '\\alert{' .. num(r.gbps) .. '} & \\alert{wrong} & \\alert{sum}'
          end
          cells[#cells + 1] = cell
        else
          cells[#cells + 1] = '-- & -- & --'
        end
      end
      if any then
        if stage == 'cub' then
          t[#t + 1] = '\\midrule'
        end
        local line = table.concat(cells, ' & ') .. '\\\\'
        if stage == 'cub' then
          line = '\\textbf{' .. label .. '}' .. line:sub(#label + 1)
        end
        t[#t + 1] = line
      else
        capped[#capped + 1] = label:match('^(%d+):')
      end
    end
  end
  t[#t + 1] = '\\bottomrule\\end{tabular}\\par'
  local note = ''
  if #capped > 0 then
    note = 'Stages ' .. table.concat(capped, ', ') .. ' use one block: $n \\le 2048$, not shown. '
  end
  t[#t + 1] = '{\\scriptsize\\color{gray}' .. note .. measured_on() .. '}\\end{center}'
  -- The conclusion, from the numbers too: the last stage at the largest n of the table.
  for k = #CUB_ROWS, 1, -1 do
    local stage, rows = CUB_ROWS[k][1], b.data[CUB_ROWS[k][1]]
    local r = rows and rows[TABLE_N[#TABLE_N]]
    if stage:match('^step') and r and r.ratio then
      t[#t + 1] = string.format('\\begin{itemize}\\item Each stage removed one cost. The last, '
        .. 'at $n = 2^{%d}$: %s\\,\\%% of the peak, %s $\\times$ CUB\'s time.\\end{itemize}',
        log2(TABLE_N[#TABLE_N]), num(r.pct), string.format('%.2f', r.ratio))
      break
    end
  end
  return { pandoc.RawBlock('latex', table.concat(t, '\n')) }
end

local function bench_plot()
  local png = os.getenv('SLIDES_PLOT') or ''
  if png == '' then
    return { pandoc.RawBlock('latex', '\\begin{center}\\vspace*{1.2cm}{\\Large No benchmark '
      .. 'plot yet.}\\par\\bigskip Run \\texttt{make bench} on a GPU: it writes '
      .. '\\texttt{bench/<gpu>/results.csv} and \\texttt{bandwidth.png};\\\\then '
      .. '\\texttt{make slides} puts them here.\\end{center}') }
  end
  return { pandoc.RawBlock('latex', '\\begin{center}\\includegraphics[width=\\linewidth,'
    .. 'height=0.8\\textheight,keepaspectratio]{' .. png .. '}\\par'
    .. '{\\scriptsize\\color{gray}\\texttt{' .. tex_escape(png) .. '}}\\end{center}') }
end

---------------------------------------------------------------------------------------------------
-- Frames.

-- What a block costs in code lines (an estimate; build.sh checks the real thing).
local function units(block)
  local t = block.t
  if t == 'CodeBlock' then
    return #split_lines(block.text) + 1
  elseif t == 'RawBlock' then
    local n = block.text:match('%% units: ([%d.]+)')
    if n then
      return tonumber(n)
    end
    if block.text:match('^\\slidecheckend') then
      return 0
    end
    local rows = select(2, block.text:gsub('\\\\', ''))
    return 1 + TEXT_LINE * math.max(1, rows)
  elseif t == 'Para' or t == 'Plain' then
    local chars = utf8_len(pandoc.utils.stringify(block))
    return TEXT_LINE * math.ceil(chars / CHARS_PER_LINE) + 0.5
  elseif t == 'BulletList' or t == 'OrderedList' then
    local u = 0.5
    for _, item in ipairs(block.content) do
      for _, b in ipairs(item) do
        u = u + units(b) + 0.2
      end
    end
    return u
  elseif t == 'Div' and block.classes:includes('columns') then
    local u = 0
    for _, b in ipairs(block.content) do
      u = math.max(u, units(b))
    end
    return u
  elseif t == 'Div' then
    local u = 0
    for _, b in ipairs(block.content) do
      u = u + units(b)
    end
    return u
  elseif t == 'Table' and block.head and block.bodies then
    local rows = #block.head.rows
    for _, body in ipairs(block.bodies) do
      rows = rows + #body.body
    end
    return TEXT_LINE * rows + 1.5
  elseif t == 'Header' then
    return TEXT_LINE + 0.5
  end
  return 2
end

-- Expands the directives of one frame's blocks; returns the blocks and the one splittable block
-- (a region or a diff) if there is exactly one.
local function expand(blocks, title)
  local out, splittable, count = {}, nil, 0
  for _, b in ipairs(blocks) do
    if b.t == 'CodeBlock' and b.attributes.file then
      local file, region = b.attributes.file, b.attributes.region or 'kernel'
      local lines = region_lines(file, region)
      shown_code[file:match('^([^/]*)/') or file] = true
      check_width(lines, file .. ' (region ' .. region .. ')')
      local cls = b.classes[1] or 'cuda'
      local entry = { kind = 'code', lines = lines, cls = cls, what = file .. ' ' .. region }
      out[#out + 1] = entry
      count = count + 1
      splittable = entry
    elseif b.t == 'CodeBlock' and b.classes:includes('diff') and b.attributes.step then
      local lines, kinds, tex = diff_lines(b.attributes.step)
      shown_diff[string.format('%02d', tonumber(b.attributes.step))] = true
      check_width(lines, 'make diff STEP=' .. b.attributes.step)
      local entry = { kind = 'diff', lines = lines, kinds = kinds, tex = tex,
        what = 'make diff STEP=' .. b.attributes.step }
      out[#out + 1] = entry
      count = count + 1
      splittable = entry
    elseif b.t == 'CodeBlock' then
      check_width(split_lines(b.text), 'a code block in "' .. title .. '"')
      out[#out + 1] = b
      count = count + 1
    elseif b.t == 'Div' and b.classes:includes('numbers') then
      for _, x in ipairs(numbers_block(b.attributes.stage)) do
        out[#out + 1] = x
      end
    elseif b.t == 'Div' and b.classes:includes('cubtable') then
      for _, x in ipairs(cub_table()) do
        out[#out + 1] = x
      end
    elseif b.t == 'Div' and b.classes:includes('benchplot') then
      for _, x in ipairs(bench_plot()) do
        x.text = x.text .. '\n% units: 18'
        out[#out + 1] = x
      end
    elseif b.t == 'Div' and b.classes:includes('measured') then
      local bb = load_bench()
      if bb then
        out[#out + 1] = pandoc.RawBlock('latex', '{\\scriptsize\\color{gray}' .. measured_on()
          .. '\\par}')
      end
    else
      out[#out + 1] = b
    end
  end
  return out, (count == 1) and splittable or nil, count
end

local function entry_block(e, first, last)
  if e.kind == 'diff' then
    return diff_block(e.tex, first, last)
  end
  local lines = {}
  for i = first, last do
    lines[#lines + 1] = e.lines[i]
  end
  return pandoc.CodeBlock(table.concat(lines, '\n'), { class = e.cls })
end

local function entry_units(e)
  return #e.lines + 1
end

-- One frame in, one or more frames out.
local function do_frame(header, blocks)
  local title = pandoc.utils.stringify(header.content)
  local content, splittable, ncode = expand(blocks, title)
  local other = 0
  for _, b in ipairs(content) do
    if not b.kind then
      other = other + units(b)
    end
  end
  local code_total = 0
  for _, b in ipairs(content) do
    if b.kind then
      code_total = code_total + entry_units(b)
    end
  end
  local budget = FRAME_UNITS - other
  local parts = { { 1, splittable and #splittable.lines or 0 } }
  -- A frame without one code block or diff is left whole: build.sh says if it does not fit.
  if splittable and other + code_total > FRAME_UNITS + 0.01 then
    local e = splittable
    local lines_budget = math.floor(budget) - 1
    if lines_budget < 8 then
      fail(string.format('frame "%s": the text leaves room for only %d lines of %s', title,
        lines_budget, e.what))
    end
    local cost, blank
    if e.kind == 'diff' then
      cost = function(i) return diff_break_cost(e.kinds, e.lines, i) end
    else
      cost = function(i) return code_break_cost(e.lines, i) end
      blank = function(i) return e.lines[i]:match('^%s*$') ~= nil end
    end
    parts = split(#e.lines, lines_budget, cost, blank)
    if not parts then
      fail(string.format('frame "%s": %s (%d lines) cannot be split into pieces of %d lines',
        title, e.what, #e.lines, lines_budget))
    end
  end
  local frames = {}
  for p, range in ipairs(parts) do
    local h = header:clone()
    if #parts > 1 then
      h.content:extend({ pandoc.Space(), pandoc.Str(string.format('(%d/%d)', p, #parts)) })
    end
    if ncode > 0 and not h.classes:includes('fragile') then
      h.classes:insert('fragile')
    end
    frames[#frames + 1] = h
    for _, b in ipairs(content) do
      if b.kind then
        if b == splittable then
          frames[#frames + 1] = entry_block(b, range[1], range[2])
        else
          frames[#frames + 1] = entry_block(b, 1, #b.lines)
        end
      else
        frames[#frames + 1] = b
      end
    end
    local id = pandoc.utils.stringify(h.content):gsub('[^%w%s%.:/()+-]', '')
    frames[#frames + 1] = pandoc.RawBlock('latex', '\\slidecheckend{' .. id .. '}')
  end
  return frames
end

local function check_coverage()
  local dirs = pandoc.pipe('sh', { '-c', 'ls -d step[0-9][0-9]_*/ 2>/dev/null || true' }, '')
  for dir in dirs:gmatch('(step%d%d_[^/\n]*)/') do
    local nn = dir:match('^step(%d%d)')
    if not shown_code[dir] then
      warn(dir .. ' has no code slide: add a {.cuda file="' .. dir .. '/reduce.cu" region="kernel"}'
        .. ' block to slides/reduction.md')
    end
    if nn ~= '00' and not shown_diff[nn] then
      warn(dir .. ' has no diff slide: add a {.diff step="' .. nn .. '"} block to '
        .. 'slides/reduction.md')
    end
  end
end

function Pandoc(doc)
  local out, blocks, i = {}, doc.blocks, 1
  while i <= #blocks do
    local b = blocks[i]
    if b.t == 'Header' and b.level == 2 then
      local body = {}
      i = i + 1
      while i <= #blocks and not (blocks[i].t == 'Header' and blocks[i].level <= 2)
        and blocks[i].t ~= 'HorizontalRule' do
        body[#body + 1] = blocks[i]
        i = i + 1
      end
      for _, x in ipairs(do_frame(b, body)) do
        out[#out + 1] = x
      end
    else
      if b.t == 'CodeBlock' or (b.t == 'Div' and #b.classes > 0) then
        fail('a code block or a directive outside any frame (under no "##" title)')
      end
      out[#out + 1] = b
      i = i + 1
    end
  end
  check_coverage()
  doc.blocks = out
  return doc
end
