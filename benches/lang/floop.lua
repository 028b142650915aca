-- An F64 loop: 5 million steps of the Leibniz series for pi. Output: the
-- sum times 10^9, floored to an Int, so no language's float printing is
-- involved (the additions are the same IEEE operations in the same order).
local function main()
  local s = 0.0
  local d = 1.0
  local i = 0
  while i < 5000000 do
    s = s + 4.0 / d
    d = d + 2.0
    s = s - 4.0 / d
    d = d + 2.0
    i = i + 1
  end
  print(math.floor(s * 1000000000.0))
end
main()
