-- Arr index reads and writes: 5,000 prefix-sum passes over 1,000 Ints
-- (two reads and one write per step, 5 million steps). Lua's table is
-- 1-based: a[i + 1] is twill's a[i].
local function main()
  local a = {}
  for i = 0, 999 do a[i + 1] = i end
  for r = 1, 5000 do
    for i = 2, 1000 do
      a[i] = (a[i] + a[i - 1]) % 1000003
    end
  end
  print(a[1000])
end
main()
