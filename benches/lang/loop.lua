-- A 10-million-iteration while loop of Int arithmetic.
local function main()
  local s = 0
  local i = 0
  while i < 10000000 do
    s = (s + i * i) % 1000003
    i = i + 1
  end
  print(s)
end
main()
