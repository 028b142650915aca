-- Calling a closure in a loop: 5 million calls of a closure that captured
-- two values (upvalues).
local function main()
  local k = 7
  local m = 1000003
  local f = function(v) return (v * k + 3) % m end
  local s = 0
  for i = 0, 4999999 do
    s = f(s + i)
  end
  print(s)
end
main()
