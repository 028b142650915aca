-- Building strings and string operations: 3 million appends of an Int's
-- text, with a length, a slice and a concatenation whenever the string
-- passes 100 characters. string.sub is 1-based and inclusive: t[3:10] is
-- t:sub(4, 10), t[50:] is t:sub(51).
local function main()
  local t = ""
  local total = 0
  for i = 0, 2999999 do
    t = t .. tostring(i % 1000)
    if #t > 100 then
      total = total + #t + #(t:sub(4, 10) .. "x")
      t = t:sub(51)
    end
  end
  io.write(total, " ", t, "\n")
end
main()
