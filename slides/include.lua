--[[ include.lua: the pandoc filter that reads the stages' code and the measurements into the deck;
slides/build.sh runs it from the repository root. README.md ("Slides") has the syntax: code blocks
{.cuda file=F function=NAME} (that function, whole) and {.diff step=NN lines="A-B"} (what make diff
STEP=NN prints, or part of it), and the divs numbers, cubtable, benchplot, measured, variants,
counters, allreduce and allreduceplot (tables from the newest bench/*/results.csv, variants.csv,
allreduce.csv, metrics/*/metrics.csv, or a line saying what makes them). Pandoc makes frames with
code fragile; preamble.tex checks. ]]

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
-- The measurements. bench/<gpu>/results.csv and variants.csv: gpu,stage,n,bytes,median_ms,min_ms,
-- max_ms,gbps,peak_gbps,peak_pct,ratio_to_cub,sum_ok; metrics/<gpu>/metrics.csv: gpu,stage,n,
-- block,metric,value,unit. A stage measured more than once at one n counts with its median.

local function csv(glob) -- the rows of the newest file matching glob, and its path; nil if none
  local ls = io.popen('ls -t ' .. glob .. ' 2>/dev/null')
  local path, head, rows = ls:read('l'), nil, {}
  ls:close()
  if not path then return nil end
  for _, line in ipairs(read_lines(path)) do
    local cells, row = {}, {}
    for cell in (line .. ','):gmatch('([^,]*),') do cells[#cells + 1] = cell end
    for k, name in ipairs(head or {}) do row[name] = tonumber(cells[k]) or cells[k] end
    if head then rows[#rows + 1] = row else head = cells end
  end
  return rows, path
end

local function stat(rows, stage, n, col) -- the median of col over stage's rows at n, and the least
  local xs = {}
  for _, r in ipairs(rows) do
    if r.stage == stage and r.n == n and type(r[col]) == 'number' then xs[#xs + 1] = r[col] end
  end
  table.sort(xs)
  if #xs > 0 then return (xs[(#xs + 1) // 2] + xs[#xs // 2 + 1]) / 2, xs[1] end
end

local function largest(rows, stage) -- the largest n at which stage was measured
  local top
  for _, r in ipairs(rows) do if r.stage == stage and (not top or r.n > top) then top = r.n end end
  return top
end

local function num(x)
  return x and string.format(x >= 100 and '%.0f' or x >= 10 and '%.1f' or '%.2f', x) or '--'
end

local function esc(s) return (tostring(s):gsub('[_%%&#$]', '\\%0')) end -- for LaTeX

local function pow2(n) return string.format('$2^{%d}$', math.floor(math.log(n, 2) + 0.5)) end

local function bytes(n) -- of n int32 elements
  local b, u, units = 4 * n, 1, { 'B', 'KiB', 'MiB', 'GiB', 'TiB' }
  while b >= 1024 and u < #units do b, u = b / 1024, u + 1 end
  return string.format('%g\\,%s', b, units[u])
end

local function tabular(cols, head, rows, note)
  local t = { '\\par\\smallskip{\\centering\\small\\begin{tabular}{@{}' .. cols .. '@{}}\\toprule '
    .. head .. '\\\\\\midrule' }
  for _, r in ipairs(rows) do t[#t + 1] = table.concat(r, ' & ') .. '\\\\' end
  t[#t + 1] = '\\bottomrule\\end{tabular}\\par{\\scriptsize\\color{deckgray}' .. note .. '\\par}}'
  return pandoc.RawBlock('latex', table.concat(t, '\n'))
end

local function placeholder(text)
  return pandoc.RawBlock('latex', '\\par\\smallskip{\\centering\\emph{' .. text .. '}\\par}')
end
local NO_BENCH = 'No measurements: run \\texttt{make bench} on a GPU, then \\texttt{make slides}.'

local function measured(rows, path)
  return string.format('%s, peak %s\\,GB/s; medians, L2 flushed before each run; \\texttt{%s}',
    esc(rows[1].gpu), num(rows[1].peak_gbps), esc(path))
end

local function numbers(a)
  local rows, path = csv('bench/*/results.csv')
  if not rows then return placeholder(NO_BENCH) end
  local ns, out = {}, {}
  for _, n in ipairs({ 1 << 24, 1 << 28 }) do
    if stat(rows, a.stage, n, 'gbps') then ns[#ns + 1] = n end
  end
  if #ns == 0 then ns = { largest(rows, a.stage) or fail('no ' .. a.stage .. ' in ' .. path) } end
  for k, n in ipairs(ns) do
    local ms, ok = stat(rows, a.stage, n, 'median_ms'), select(2, stat(rows, a.stage, n, 'sum_ok'))
    out[k] = { pow2(n) .. ' (' .. bytes(n) .. ')' .. (ok == 1 and '' or ' \\alert{wrong sum}'),
      ms < 1 and num(ms * 1000) .. '\\,\\textmu s' or num(ms) .. '\\,ms' }
    for _, col in ipairs({ 'gbps', 'peak_pct', 'ratio_to_cub' }) do
      out[k][#out[k] + 1] = num(stat(rows, a.stage, n, col))
    end
  end
  return tabular('lrrrr', '$n$ & time & GB/s & \\% of peak & time / CUB', out, measured(rows, path))
end

local function row(rows, name, label, spec) -- label, then the median of each {n, column} of spec
  local cells = { label }
  for _, c in ipairs(spec) do cells[#cells + 1] = num(stat(rows, name, c[1], c[2])) end
  return cells
end

local function cubtable()
  local rows, path = csv('bench/*/results.csv')
  if not rows then return placeholder(NO_BENCH) end
  local spec, names, seen, out = {}, {}, {}, {}
  for _, n in ipairs({ 1 << 24, 1 << 28 }) do
    for _, col in ipairs({ 'gbps', 'peak_pct', 'ratio_to_cub' }) do spec[#spec + 1] = { n, col } end
  end
  for _, r in ipairs(rows) do
    if not seen[r.stage] then seen[r.stage], names[#names + 1] = true, r.stage end
  end
  local rank = { cub = '~1', copy = '~2' } -- the stages, then CUB and the copy
  table.sort(names, function(x, y) return (rank[x] or x) < (rank[y] or y) end)
  for _, s in ipairs(names) do
    out[#out + 1] = row(rows, s, s == 'cub' and '\\midrule\\textbf{CUB DeviceReduce::Sum}' or
      s == 'copy' and 'cudaMemcpy (reads + writes)' or esc(s), spec)
    if s == 'cub' then out[#out][4], out[#out][7] = '1', '1' end
  end
  local head = string.format('& \\multicolumn{3}{c}{$n = 2^{24}$ (%s)} & \\multicolumn{3}{c}{$n = '
    .. '2^{28}$ (%s)}\\\\\\cmidrule(l){2-4}\\cmidrule(l){5-7} stage & GB/s & \\%% peak & time / CUB'
    .. ' & GB/s & \\%% peak & time / CUB', bytes(spec[1][1]), bytes(spec[4][1]))
  return tabular('lrrrrrr', head, out, '--: not measured (one block: $n \\le 2048$). '
    .. measured(rows, path))
end

local function variants(a)
  local rows, path = csv('bench/*/variants.csv')
  if not rows then return placeholder('No variants measured yet: run \\texttt{make bench}.') end
  local NS, head, out = { 1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30 }, 'variant', {}
  for name in a.names:gmatch('[^,%s]+') do
    local spec, top = {}, largest(rows, name) -- % of peak at the largest n, said if not 2^30
    for k, n in ipairs(NS) do spec[k] = { n, 'ratio_to_cub' } end
    spec[#NS + 1] = { top, 'peak_pct' }
    out[#out + 1] = row(rows, name, esc(name), spec)
    if top and top ~= NS[5] then out[#out][7] = out[#out][7] .. ' at ' .. pow2(top) end
  end
  for _, n in ipairs(NS) do head = head .. ' & ' .. pow2(n) end
  return tabular('lrrrrrr', '& \\multicolumn{5}{c}{time / CUB at $n =$} & \\% of peak\\\\'
    .. '\\cmidrule(l){2-6}' .. head .. ' & at ' .. pow2(NS[5]), out,
    'time / CUB below 1: faster than CUB. ' .. measured(rows, path))
end

-- Short names of the Nsight Compute counters: the first pattern that a metric's name matches.
local LABELS = { { 'bank_conflicts.*_ld%.', 'bank conflicts (loads)' },
  { 'bank_conflicts.*_st%.', 'bank conflicts (stores)' }, { 'bank_conflicts', 'bank conflicts' },
  { 'sectors.*global_op_ld', 'global load sectors' }, { 'lts__.*red', 'L2 atomic requests' },
  { 'sectors.*global_op_st', 'global store sectors' }, { '%[BAR%]', 'barriers' }, { '%[REDUX%]',
  'warp reductions' }, { 'smsp__inst_executed%.sum', 'warp instructions' }, { 'thread_inst_executed.*per_inst',
  'active threads / warp instr.' }, { 'global_red', 'atomics' }, { 'requests.*global_op_ld', 'load requests' },
  { 'global_atom', 'atomics' }, { 'shared_ld', 'shared loads' },
  { 'dram.*pct', 'DRAM \\% of peak' } }

local function count(v, unit) -- a counter's value: 1,234,567 or 12.5 or 93.4 %
  if type(v) ~= 'number' then return esc(v) end
  if unit == '%' then return num(v) .. '\\,\\%' end
  return v % 1 ~= 0 and num(v) or
    (string.format('%d', v):reverse():gsub('(%d%d%d)', '%1,'):reverse():gsub('^,', ''))
end

local function counters(a)
  local rows, path = csv('metrics/*/metrics.csv')
  if not rows then return placeholder('No counters yet: run \\texttt{make metrics} on a GPU.') end
  local head, col, ncol, out, at = 'stage & $n$ & block', {}, 3, {}, {}
  for m in a.metrics:gmatch('[^,%s]+') do
    local label = esc(m)
    for _, l in ipairs(LABELS) do
      if m:match(l[1]) then label = l[2]; break end
    end
    head, ncol, col[m] = head .. ' & ' .. label, ncol + 1, ncol + 1
  end
  for s in a.stage:gmatch('[^,%s]+') do
    for _, r in ipairs(rows) do -- a row per stage, n and block, in the CSV's order
      local key = s .. ' ' .. r.n .. ' ' .. r.block
      if r.stage == s and not at[key] then
        at[key], out[#out + 1] = { esc(s), pow2(r.n), r.block }, key
        for k = 4, ncol do at[key][k] = '--' end
      end
      if r.stage == s and col[r.metric] then at[key][col[r.metric]] = count(r.value, r.unit) end
    end
  end
  if #out == 0 then return placeholder('No counters of ' .. esc(a.stage) .. ' in ' .. esc(path)) end
  for k, key in ipairs(out) do out[k] = at[key] end
  return tabular('llr' .. string.rep('r', ncol - 3), head, out,
    'Nsight Compute on ' .. esc(rows[1].gpu) .. '; \\texttt{' .. esc(path) .. '}')
end

local function measured_line()
  local rows, path = csv('bench/*/results.csv')
  return rows and pandoc.RawBlock('latex', '{\\scriptsize\\color{deckgray}' .. measured(rows, path)
    .. '\\par}') or placeholder(NO_BENCH)
end

local function benchplot()
  local _, path = csv('bench/*/results.csv')
  local png = path and path:gsub('results%.csv$', 'bandwidth.png')
  if not (png and io.open(png)) then return placeholder('No plot: run \\texttt{make bench}.') end
  return pandoc.RawBlock('latex', '\\begin{center}\\includegraphics[width=\\linewidth,height=0.8'
    .. '\\textheight,keepaspectratio]{' .. png .. '}\\par{\\scriptsize\\color{deckgray}\\texttt{'
    .. esc(png) .. '}}\\end{center}')
end

-- Stage 9: the newest bench/*/allreduce.csv (make bench-step09), gpu,gpus,type,bytes,median_ms,
-- algbw_gbps,busbw_gbps,copy_gbps,wrong: a row per number of GPUs and type, and allreduce.png.
local NO_ALLREDUCE = 'No all-reduce measured yet: run \\texttt{make bench-step09} on a GPU.'

local function median(rows, keep, col) -- the median of col over the rows that keep() accepts
  local xs = {}
  for _, r in ipairs(rows) do
    if keep(r) and type(r[col]) == 'number' then xs[#xs + 1] = r[col] end
  end
  table.sort(xs)
  if #xs > 0 then return (xs[(#xs + 1) // 2] + xs[#xs // 2 + 1]) / 2 end
end

local function allreduce()
  local rows, path = csv('bench/*/allreduce.csv')
  if not rows then return placeholder(NO_ALLREDUCE) end
  local SIZES, groups, seen, out = { 1 << 10, 1 << 20, 1 << 26, 1 << 30 }, {}, {}, {}
  for k, r in ipairs(rows) do -- (G, type) in the order of G, then of the CSV
    local key = r.gpus .. ' ' .. r.type
    if not seen[key] then seen[key], groups[#groups + 1] = true, { r.gpus, r.type, k } end
  end
  table.sort(groups, function(x, y) return x[1] < y[1] or x[1] == y[1] and x[3] < y[3] end)
  for _, g in ipairs(groups) do
    local function at(bytes, col)
      return median(rows, function(r) return r.gpus == g[1] and r.type == g[2] and r.bytes == bytes
        end, col)
    end
    local cells = { g[1], esc(g[2]) }
    for _, b in ipairs(SIZES) do cells[#cells + 1] = num(at(b, 'algbw_gbps')) end
    local busbw, ms = at(SIZES[4], 'busbw_gbps'), at(SIZES[1], 'median_ms')
    cells[#cells + 1] = g[1] == 1 and busbw == 0 and '0 (no link)' or num(busbw)
    cells[#cells + 1] = ms and num(ms * 1000) .. '\\,\\textmu s' or '--'
    for _, r in ipairs(rows) do
      if r.gpus == g[1] and r.type == g[2] and r.wrong ~= 0 then
        cells[2] = cells[2] .. ' \\alert{wrong sums}'; break
      end
    end
    out[#out + 1] = cells
  end
  local copy = median(rows, function() return true end, 'copy_gbps')
  local head = '& & \\multicolumn{4}{c}{algbw, GB/s, at $m =$} & busbw, GB/s & time\\\\'
    .. '\\cmidrule(l){3-6} $G$ & type & 1\\,KiB & 1\\,MiB & 64\\,MiB & 1\\,GiB & at 1\\,GiB'
    .. ' & at 1\\,KiB'
  return tabular('clrrrrrr', head, out, string.format('%s; $m$: bytes a GPU; medians, every L2 '
    .. 'flushed before each call. One GPU\'s device-to-device copy in the same runs: %s\\,GB/s '
    .. 'read + write, %s read. \\texttt{%s}', esc(rows[1].gpu), num(copy), num(copy and copy / 2),
    esc(path)))
end

local function allreduceplot()
  local _, path = csv('bench/*/allreduce.csv')
  local png = path and path:gsub('allreduce%.csv$', 'allreduce.png')
  if not (png and io.open(png)) then return placeholder(NO_ALLREDUCE) end
  return pandoc.RawBlock('latex', '\\begin{center}\\includegraphics[width=\\linewidth,height=0.58'
    .. '\\textheight,keepaspectratio]{' .. png .. '}\\par{\\scriptsize\\color{deckgray}\\texttt{'
    .. esc(png) .. '}}\\end{center}')
end

local DIVS = { numbers = numbers, cubtable = cubtable, variants = variants, counters = counters,
  measured = measured_line, benchplot = benchplot, allreduce = allreduce,
  allreduceplot = allreduceplot }
function Div(d)
  for class, make in pairs(DIVS) do
    if d.classes:includes(class) then return make(d.attributes) end
  end
end
