# fasta (Benchmarks Game): the Python reference (fasta.py: a generator for
# the linear congruential random numbers, bisect over the cumulative
# probabilities, ''.join for a line), inside functions. Argument: n.
# Output: text only; the random numbers are the same IEEE divisions in
# every language, so the picks are the same.
import bisect
import sys

def gen_random(lim, ia=3877, ic=29573, im=139968):
    seed = 42
    imf = float(im)
    while 1:
        seed = (seed * ia + ic) % im
        yield lim * seed / imf


def make_cumulative(table):
    probs = []
    chars = []
    prob = 0.0
    for char, p in table:
        prob += p
        probs.append(prob)
        chars.append(char)
    return probs, chars


def repeat_fasta(src, n):
    width = 60
    r = len(src)
    s = src + src
    for j in range(n // width):
        i = j * width % r
        print(s[i:i + width])
    rest = n % width
    if rest:
        i = n // width * width % r
        print(s[i:i + rest])


def random_fasta(table, n, rand):
    width = 60
    gr = rand.__next__
    bb = bisect.bisect
    jn = "".join
    probs, chars = make_cumulative(table)
    r = range(width)
    for j in range(n // width):
        print(jn([chars[bb(probs, gr())] for i in r]))
    if n % width:
        print(jn([chars[bb(probs, gr())] for i in range(n % width)]))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    alu = (
        "GGCCGGGCGCGGTGGCTCACGCCTGTAATCCCAGCACTTTGG"
        "GAGGCCGAGGCGGGCGGATCACCTGAGGTCAGGAGTTCGAGA"
        "CCAGCCTGGCCAACATGGTGAAACCCCGTCTCTACTAAAAAT"
        "ACAAAAATTAGCCGGGCGTGGTGGCGCGCGCCTGTAATCCCA"
        "GCTACTCGGGAGGCTGAGGCAGGAGAATCGCTTGAACCCGGG"
        "AGGCGGAGGTTGCAGTGAGCCGAGATCGCGCCACTGCACTCC"
        "AGCCTGGGCGACAGAGCGAGACTCCGTCTCAAAAA"
    )
    iub = list(zip("acgtBDHKMNRSVWY", [0.27, 0.12, 0.12, 0.27] + [0.02] * 11))
    homosapiens = [
        ("a", 0.3029549426680),
        ("c", 0.1979883004921),
        ("g", 0.1975473066391),
        ("t", 0.3015094502008),
    ]
    rand = gen_random(1.0)
    print(">ONE Homo sapiens alu")
    repeat_fasta(alu, n * 2)
    print(">TWO IUB ambiguity codes")
    random_fasta(iub, n * 3, rand)
    print(">THREE Homo sapiens frequency")
    random_fasta(homosapiens, n * 5, rand)


main()
