# Arr index reads and writes: 5,000 prefix-sum passes over 1,000 Ints
# (two reads and one write per step, 5 million steps).
def main():
    a = []
    for i in range(1000):
        a.append(i)
    for r in range(5000):
        for i in range(1, 1000):
            a[i] = (a[i] + a[i - 1]) % 1000003
    print(a[999])


main()
