-- k-nucleotide (Benchmarks Game): the Lua reference (k-nucleotide.lua by
-- Mike Pall: a table keyed by substrings, counted frame by frame), inside
-- functions. Input: the fasta file named by the first argument (bench.py
-- writes it with fasta.py), not stdin, as twill cannot read stdin.
--
-- Output: as the reference prints it, the percentages with "%0.3f" (C's
-- printf, Python's "%.3f" and twill's f-string `:.3f` all round the same
-- binary value correctly). Ties in frequency are sorted by the k-mer
-- ascending (the reference sorts them descending), as in the Python and
-- twill versions.

local function kfrequency(seq, freq, k, frame)
  local sub = string.sub
  local k1 = k - 1
  for i = frame, string.len(seq) - k1, k do
    local c = sub(seq, i, i + k1)
    freq[c] = (freq[c] or 0) + 1
  end
end

local function count(seq, frag)
  local k = string.len(frag)
  local freq = {}
  for frame = 1, k do kfrequency(seq, freq, k, frame) end
  io.write(freq[frag] or 0, "\t", frag, "\n")
end

local function percent(c, total)
  return string.format("%0.3f", 100.0 * c / total)
end

local function frequency(seq, k)
  local freq = {}
  for frame = 1, k do kfrequency(seq, freq, k, frame) end
  local sfreq, sn, sum = {}, 1, 0
  for c, v in pairs(freq) do sfreq[sn] = c; sn = sn + 1; sum = sum + v end
  table.sort(sfreq, function(a, b)
    local fa, fb = freq[a], freq[b]
    return fa == fb and a < b or fa > fb
  end)
  for _, c in ipairs(sfreq) do
    io.write(c, " ", percent(freq[c], sum), "\n")
  end
  io.write("\n")
end

local function readseq(path)
  local lines = io.lines(path)
  for line in lines do
    if string.sub(line, 1, 1) == ">" and string.sub(line, 2, 6) == "THREE" then break end
  end
  local seq, ln = {}, 0
  for line in lines do
    local c = string.sub(line, 1, 1)
    if c == ">" then break
    elseif c ~= ";" then ln = ln + 1; seq[ln] = line end
  end
  return string.upper(table.concat(seq, "", 1, ln))
end

local function main()
  local seq = readseq(arg[1])
  frequency(seq, 1)
  frequency(seq, 2)
  count(seq, "GGT")
  count(seq, "GGTA")
  count(seq, "GGTATT")
  count(seq, "GGTATTTTAATT")
  count(seq, "GGTATTTTAATTTATAGT")
end
main()
