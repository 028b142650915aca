# fannkuch-redux (Benchmarks Game): the Python reference
# (fannkuchredux.py, slices for the flips and rotations), inside
# functions. Argument: n. Output: the checksum and the maximum number of
# flips (ints only).
import sys


def fannkuch(n):
    max_flips = 0
    perm_sign = True
    checksum = 0
    perm1 = list(range(n))
    count = perm1[:]
    rxrange = range(2, n - 1)
    nm = n - 1
    while 1:
        k = perm1[0]
        if k:
            perm = perm1[:]
            flips = 1
            kk = perm[k]
            while kk:
                perm[:k + 1] = perm[k::-1]
                flips += 1
                k = kk
                kk = perm[kk]
            if max_flips < flips:
                max_flips = flips
            checksum += flips if perm_sign else -flips
        # The next permutation, by an incremental change.
        if perm_sign:
            perm1[0], perm1[1] = perm1[1], perm1[0]
            perm_sign = False
        else:
            perm1[1], perm1[2] = perm1[2], perm1[1]
            perm_sign = True
            for r in rxrange:
                if count[r]:
                    break
                count[r] = r
                perm0 = perm1[0]
                perm1[:r + 1] = perm1[1:r + 2]
                perm1[r + 1] = perm0
            else:
                r = nm
                if not count[r]:
                    return checksum, max_flips
            count[r] -= 1


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    checksum, flips = fannkuch(n)
    print(checksum)
    print("Pfannkuchen(%d) = %d" % (n, flips))


main()
