# A 10-million-iteration while loop of Int arithmetic.
def main():
    s = 0
    i = 0
    while i < 10000000:
        s = (s + i * i) % 1000003
        i += 1
    print(s)


main()
