# An F64 loop: 5 million steps of the Leibniz series for pi. Output: the
# sum times 10^9, floored to an Int, so no language's float printing is
# involved (the additions are the same IEEE operations in the same order).
import math


def main():
    s = 0.0
    d = 1.0
    i = 0
    while i < 5000000:
        s += 4.0 / d
        d += 2.0
        s -= 4.0 / d
        d += 2.0
        i += 1
    print(math.floor(s * 1000000000.0))


main()
