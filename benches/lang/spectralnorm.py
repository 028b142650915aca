# spectral-norm (Benchmarks Game): the Python reference's eval_A with the
# loops of the Lua reference (spectralnorm.lua by Mike Pall), written out
# as plain loops over lists. Argument: N.
#
# Output: printf's "%.9f" of the norm, written by fmt9 as twill writes it:
# |x| * 10^9 rounded half up to an int, with a point before its last nine
# digits. That gives printf's digits except within an ulp of a tie.
import math
import sys


def fmt9(x):
    sign = ""
    if x < 0.0:
        sign = "-"
        x = -x
    n = math.floor(x * 1000000000.0 + 0.5)
    return sign + str(n // 1000000000) + "." + str(n % 1000000000).rjust(9, "0")


def eval_a(i, j):
    ij = i + j
    return 1.0 / (ij * (ij + 1) // 2 + i + 1)


def av(x, y, n):
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += x[j] * eval_a(i, j)
        y[i] = s


def atv(x, y, n):
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += x[j] * eval_a(j, i)
        y[i] = s


def atav(x, y, t, n):
    av(x, t, n)
    atv(t, y, n)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    u = [1.0] * n
    v = [0.0] * n
    t = [0.0] * n
    for i in range(10):
        atav(u, v, t, n)
        atav(v, u, t, n)
    vbv = 0.0
    vv = 0.0
    for i in range(n):
        vbv += u[i] * v[i]
        vv += v[i] * v[i]
    print(fmt9(math.sqrt(vbv / vv)))


main()
