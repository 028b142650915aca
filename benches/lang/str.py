# Building strings and string operations: 3 million appends of an Int's
# text, with a length, a slice and a concatenation whenever the string
# passes 100 characters.
def main():
    t = ""
    total = 0
    for i in range(3000000):
        t += str(i % 1000)
        if len(t) > 100:
            total += len(t) + len(t[3:10] + "x")
            t = t[50:]
    print(total, t)


main()
