-- mandelbrot (Benchmarks Game): the C reference's loop (mandelbrot.c #1:
-- 50 iterations, escape when |z|^2 > 4, Cr = 2x/w - 1.5, Ci = 2y/h - 1),
-- the bits packed 8 to a byte, each row padded to a whole byte, as in the
-- PBM file the reference writes. Argument: the size w = h.
--
-- Output: text instead of the binary PBM, so every language prints the
-- same bytes: the header's two lines, then a checksum of the bitmap's
-- bytes (h = (31 h + byte) mod 1000000007, integers only).

local function main()
  local n = tonumber(arg and arg[1]) or 200
  local w, h = n, n
  local iter = 50
  local limit2 = 4.0
  local sum = 0
  for y = 0, h - 1 do
    local ci = 2.0 * y / h - 1.0
    local bits, bit_num = 0, 0
    for x = 0, w - 1 do
      local cr = 2.0 * x / w - 1.5
      local zr, zi, tr, ti = 0.0, 0.0, 0.0, 0.0
      local i = 0
      while i < iter and tr + ti <= limit2 do
        zi = 2.0 * zr * zi + ci
        zr = tr - ti + cr
        tr = zr * zr
        ti = zi * zi
        i = i + 1
      end
      bits = bits * 2
      if tr + ti <= limit2 then bits = bits + 1 end
      bit_num = bit_num + 1
      if bit_num == 8 then
        sum = (sum * 31 + bits) % 1000000007
        bits, bit_num = 0, 0
      end
    end
    if bit_num > 0 then
      bits = bits << (8 - bit_num)
      sum = (sum * 31 + bits) % 1000000007
    end
  end
  io.write("P4\n", w, " ", h, "\n", sum, "\n")
end
main()
