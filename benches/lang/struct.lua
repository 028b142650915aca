-- Struct field reads and writes: 5 million steps, each reading two fields
-- and writing two. The struct is a table with fields x and y.
local function main()
  local p = { x = 0, y = 1 }
  for i = 0, 4999999 do
    p.x = (p.x + p.y) % 1000003
    p.y = (p.y + i) % 1009
  end
  io.write(p.x, " ", p.y, "\n")
end
main()
