# k-nucleotide (Benchmarks Game): the Python reference (knucleotide.py: a
# defaultdict keyed by substrings), inside functions. Input: the fasta file
# named by the first argument (bench.py writes it with fasta.py), not
# stdin, as twill cannot read stdin.
#
# Output: as the reference prints it, the percentages with "%.3f" (twill's
# f-string `:.3f` rounds the same binary value the same way). Ties in
# frequency are sorted by the k-mer, ascending.
import sys
from collections import defaultdict


def gen_freq(seq, frame):
    freq = defaultdict(int)
    ns = len(seq) + 1 - frame
    for ii in range(ns):
        freq[seq[ii:ii + frame]] += 1
    return ns, freq


def percent(count, total):
    return "%.3f" % (100.0 * count / total)


def sort_seq(seq, length):
    n, freq = gen_freq(seq, length)
    items = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))
    for st, fr in items:
        print(st + " " + percent(fr, n))
    print()


def find_seq(seq, s):
    n, t = gen_freq(seq, len(s))
    print("%d\t%s" % (t.get(s, 0), s))


def read_sequence(path):
    with open(path) as f:
        for line in f:
            if line.startswith(">THREE"):
                break
        seq = []
        for line in f:
            if line[0] in ">;":
                break
            seq.append(line[:-1])
    return "".join(seq).upper()


def main():
    sequence = read_sequence(sys.argv[1])
    for nl in 1, 2:
        sort_seq(sequence, nl)
    for se in "GGT GGTA GGTATT GGTATTTTAATT GGTATTTTAATTTATAGT".split():
        find_seq(sequence, se)


main()
