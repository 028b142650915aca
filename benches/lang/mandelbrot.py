# mandelbrot (Benchmarks Game): the C reference's loop (mandelbrot.c #1:
# 50 iterations, escape when |z|^2 > 4, Cr = 2x/w - 1.5, Ci = 2y/h - 1) on
# plain floats, the bits packed 8 to a byte, each row padded to a whole
# byte, as in the PBM file the reference writes. Argument: the size w = h.
#
# Output: text instead of the binary PBM, so every language prints the
# same bytes: the header's two lines, then a checksum of the bitmap's bytes
# (h = (31 h + byte) mod 1000000007, ints only).
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    w = h = n
    iterations = 50
    limit2 = 4.0
    total = 0
    for y in range(h):
        ci = 2.0 * y / h - 1.0
        bits = 0
        bit_num = 0
        for x in range(w):
            cr = 2.0 * x / w - 1.5
            zr = zi = tr = ti = 0.0
            i = 0
            while i < iterations and tr + ti <= limit2:
                zi = 2.0 * zr * zi + ci
                zr = tr - ti + cr
                tr = zr * zr
                ti = zi * zi
                i += 1
            bits = bits * 2
            if tr + ti <= limit2:
                bits += 1
            bit_num += 1
            if bit_num == 8:
                total = (total * 31 + bits) % 1000000007
                bits = 0
                bit_num = 0
        if bit_num > 0:
            bits = bits * 2 ** (8 - bit_num)
            total = (total * 31 + bits) % 1000000007
    print("P4")
    print("%d %d" % (w, h))
    print(total)


main()
