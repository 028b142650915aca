# n-body (Benchmarks Game): the Python reference (nbody.py, bodies as
# lists, precomputed pairs, tuple unpacking) with the arithmetic of the Lua
# reference (mag = dt / (sqrt(d2) * d2), the energy summed body by body), so
# all three languages compute the same bits. Argument: the number of steps.
#
# Output: printf's "%.9f", written as twill writes it: fmt9 rounds
# |x| * 10^9 to an int, half up, and puts a point before the last nine
# digits. That gives printf's digits except within an ulp of a tie.
import math
import sys


def fmt9(x):
    sign = ""
    if x < 0.0:
        sign = "-"
        x = -x
    n = math.floor(x * 1000000000.0 + 0.5)
    return sign + str(n // 1000000000) + "." + str(n % 1000000000).rjust(9, "0")


def start():
    pi = 3.141592653589793
    solar_mass = 4.0 * pi * pi
    days_per_year = 365.24
    return [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], solar_mass),
        ([4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01],
         [1.66007664274403694e-03 * days_per_year, 7.69901118419740425e-03 * days_per_year,
          -6.90460016972063023e-05 * days_per_year],
         9.54791938424326609e-04 * solar_mass),
        ([8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01],
         [-2.76742510726862411e-03 * days_per_year, 4.99852801234917238e-03 * days_per_year,
          2.30417297573763929e-05 * days_per_year],
         2.85885980666130812e-04 * solar_mass),
        ([1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01],
         [2.96460137564761618e-03 * days_per_year, 2.37847173959480950e-03 * days_per_year,
          -2.96589568540237556e-05 * days_per_year],
         4.36624404335156298e-05 * solar_mass),
        ([1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01],
         [2.68067772490389322e-03 * days_per_year, 1.62824170038242295e-03 * days_per_year,
          -9.51592254519715870e-05 * days_per_year],
         5.15138902046611451e-05 * solar_mass),
    ]


def combinations(bodies):
    result = []
    for x in range(len(bodies) - 1):
        for y in bodies[x + 1:]:
            result.append((bodies[x], y))
    return result


def advance(dt, n, bodies, pairs):
    sqrt = math.sqrt
    for i in range(n):
        for (([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2)) in pairs:
            dx = x1 - x2
            dy = y1 - y2
            dz = z1 - z2
            d2 = dx * dx + dy * dy + dz * dz
            mag = dt / (sqrt(d2) * d2)
            b2m = m2 * mag
            b1m = m1 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for (r, [vx, vy, vz], m) in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz


def energy(bodies):
    e = 0.0
    for i, ((x1, y1, z1), (vx, vy, vz), m1) in enumerate(bodies):
        e += 0.5 * m1 * (vx * vx + vy * vy + vz * vz)
        for ((x2, y2, z2), v2, m2) in bodies[i + 1:]:
            dx = x1 - x2
            dy = y1 - y2
            dz = z1 - z2
            e -= m1 * m2 / math.sqrt(dx * dx + dy * dy + dz * dz)
    return e


def offset_momentum(bodies):
    px = py = pz = 0.0
    for (r, [vx, vy, vz], m) in bodies:
        px += vx * m
        py += vy * m
        pz += vz * m
    (r, v, m) = bodies[0]
    v[0] = -px / m
    v[1] = -py / m
    v[2] = -pz / m


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    bodies = start()
    pairs = combinations(bodies)
    offset_momentum(bodies)
    print(fmt9(energy(bodies)))
    advance(0.01, n, bodies, pairs)
    print(fmt9(energy(bodies)))


main()
