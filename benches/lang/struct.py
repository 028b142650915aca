# Struct field reads and writes: 5 million steps, each reading two fields
# and writing two. The struct is a class with __slots__, CPython's
# fastest plain record.
class P:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


def main():
    p = P(0, 1)
    for i in range(5000000):
        p.x = (p.x + p.y) % 1000003
        p.y = (p.y + i) % 1009
    print(p.x, p.y)


main()
