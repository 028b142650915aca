-- spectral-norm (Benchmarks Game): the Lua reference (spectralnorm.lua by
-- Mike Pall), inside functions. Argument: N.
--
-- Output: printf's "%.9f" of the norm, written by fmt9 as twill writes it:
-- |x| * 10^9 rounded half up to an integer, with a point before its last
-- nine digits. That gives printf's digits except within an ulp of a tie.

local function fmt9(x)
  local sign = ""
  if x < 0.0 then sign = "-"; x = -x end
  local n = math.floor(x * 1000000000.0 + 0.5)
  local frac = tostring(n % 1000000000)
  return sign .. tostring(n // 1000000000) .. "." .. string.rep("0", 9 - #frac) .. frac
end

local function A(i, j)
  local ij = i + j - 1
  return 1.0 / (ij * (ij - 1) * 0.5 + i)
end

local function Av(x, y, N)
  for i = 1, N do
    local a = 0
    for j = 1, N do a = a + x[j] * A(i, j) end
    y[i] = a
  end
end

local function Atv(x, y, N)
  for i = 1, N do
    local a = 0
    for j = 1, N do a = a + x[j] * A(j, i) end
    y[i] = a
  end
end

local function AtAv(x, y, t, N)
  Av(x, t, N)
  Atv(t, y, N)
end

local function main()
  local N = tonumber(arg and arg[1]) or 100
  local u, v, t = {}, {}, {}
  for i = 1, N do u[i] = 1 end
  for i = 1, 10 do AtAv(u, v, t, N) AtAv(v, u, t, N) end
  local vBv, vv = 0, 0
  for i = 1, N do
    local ui, vi = u[i], v[i]
    vBv = vBv + ui * vi
    vv = vv + vi * vi
  end
  io.write(fmt9(math.sqrt(vBv / vv)), "\n")
end
main()
