-- fasta (Benchmarks Game): after the Lua reference (fasta.lua by Mike
-- Pall), without its generated code: the same linear congruential
-- generator, a linear search over the cumulative probabilities, a line
-- buffered in a table. Argument: n. Output: text only; the random numbers
-- are the same IEEE divisions in every language, so the picks are the same.

local write, sub, concat = io.write, string.sub, table.concat

local function repeat_fasta(src, n)
  local width = 60
  local r = #src
  local s = src .. src
  for j = 0, n // width - 1 do
    local i = j * width % r
    write(sub(s, i + 1, i + width), "\n")
  end
  local rest = n % width
  if rest > 0 then
    local i = n // width * width % r
    write(sub(s, i + 1, i + rest), "\n")
  end
end

-- Prints n random characters in lines of 60; returns the new seed.
local function random_fasta(chars, probs, n, seed)
  local width = 60
  local c, p = {}, 0.0
  for i = 1, #probs do p = p + probs[i]; c[i] = p end
  local buf = {}
  local left = n
  while left > 0 do
    local m = left < width and left or width
    for i = 1, m do
      seed = (seed * 3877 + 29573) % 139968
      local r = seed / 139968.0
      -- The first k with c[k] > r (see fasta.tw): no bound test.
      local k = 1
      while c[k] <= r do k = k + 1 end
      buf[i] = chars[k]
    end
    write(concat(buf, "", 1, m), "\n")
    left = left - m
  end
  return seed
end

local function main()
  local n = tonumber(arg and arg[1]) or 1000
  local alu =
    "GGCCGGGCGCGGTGGCTCACGCCTGTAATCCCAGCACTTTGG" ..
    "GAGGCCGAGGCGGGCGGATCACCTGAGGTCAGGAGTTCGAGA" ..
    "CCAGCCTGGCCAACATGGTGAAACCCCGTCTCTACTAAAAAT" ..
    "ACAAAAATTAGCCGGGCGTGGTGGCGCGCGCCTGTAATCCCA" ..
    "GCTACTCGGGAGGCTGAGGCAGGAGAATCGCTTGAACCCGGG" ..
    "AGGCGGAGGTTGCAGTGAGCCGAGATCGCGCCACTGCACTCC" ..
    "AGCCTGGGCGACAGAGCGAGACTCCGTCTCAAAAA"
  local iub_chars = { "a", "c", "g", "t", "B", "D", "H", "K", "M", "N", "R", "S", "V", "W", "Y" }
  local iub_probs = { 0.27, 0.12, 0.12, 0.27, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02 }
  local hs_chars = { "a", "c", "g", "t" }
  local hs_probs = { 0.3029549426680, 0.1979883004921, 0.1975473066391, 0.3015094502008 }
  write(">ONE Homo sapiens alu\n")
  repeat_fasta(alu, n * 2)
  write(">TWO IUB ambiguity codes\n")
  local seed = random_fasta(iub_chars, iub_probs, n * 3, 42)
  write(">THREE Homo sapiens frequency\n")
  random_fasta(hs_chars, hs_probs, n * 5, seed)
end
main()
