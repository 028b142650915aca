# fib(32) by naive recursion: 2,178,309 is printed after 7,049,155 calls.
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main():
    print(fib(32))


main()
