# Calling a closure in a loop: 5 million calls of a closure that captured
# two values.
def main():
    k = 7
    m = 1000003

    def f(v):
        return (v * k + 3) % m

    s = 0
    for i in range(5000000):
        s = f(s + i)
    print(s)


main()
