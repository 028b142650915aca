# binary-trees (Benchmarks Game): the Python reference (binarytrees.py: a
# node is a tuple of its two children, a leaf (None, None)), inside
# functions. Argument: the maximum depth. Output: ints and text only.
import sys


def make_tree(d):
    if d == 0:
        return (None, None)
    d -= 1
    return (make_tree(d), make_tree(d))


def check_tree(node):
    l, r = node
    if l is None:
        return 1
    return 1 + check_tree(l) + check_tree(r)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    min_depth = 4
    max_depth = max(min_depth + 2, n)
    stretch_depth = max_depth + 1
    print("stretch tree of depth %d\t check: %d" % (stretch_depth, check_tree(make_tree(stretch_depth))))
    long_lived_tree = make_tree(max_depth)
    for d in range(min_depth, max_depth + 1, 2):
        iterations = 2 ** (max_depth - d + min_depth)
        check = 0
        for i in range(iterations):
            check += check_tree(make_tree(d))
        print("%d\t trees of depth %d\t check: %d" % (iterations, d, check))
    print("long lived tree of depth %d\t check: %d" % (max_depth, check_tree(long_lived_tree)))


main()
