# Reference values for kernel's Exp and Log1p accuracy tests.
# Run: /usr/bin/python3 gen_ref.py   (Debian python3-mpmath 1.2.1), writes exp_ref.txt and
# log1p_ref.txt. Each line: x and hi (the exact value rounded to float64) as hex floats, then
# d = (exact - hi)/ulp(hi), the rounding error in units in the last place of hi.
import math
import random
import mpmath

mpmath.mp.prec = 240
random.seed(20260101)


def dd(v):
    hi = float(v)
    return hi, float((v - mpmath.mpf(hi)) / mpmath.mpf(math.ulp(hi)))


def write(name, fn, xs):
    with open(name, "w") as f:
        for x in xs:
            hi, lo = dd(fn(mpmath.mpf(x)))
            f.write("%s %s %.6f\n" % (x.hex(), hi.hex(), lo))


xs = [random.uniform(-745.0, 709.7) for _ in range(600)]
xs += [random.uniform(-1, 1) for _ in range(200)]
xs += [random.uniform(-745.13, -708.4) for _ in range(100)]  # subnormal results
xs += [random.choice([-1, 1]) * 10 ** random.uniform(-20, -1) for _ in range(100)]
xs += [random.uniform(709.4, 709.78) for _ in range(20)]  # where amd64 math.Exp overflows early
write("exp_ref.txt", mpmath.exp, xs)

ys = [random.uniform(-1, 10) for _ in range(400)]
ys += [-1 + 10 ** random.uniform(-16, -0.3) for _ in range(150)]  # near -1
ys += [random.choice([-1, 1]) * 10 ** random.uniform(-300, -1) for _ in range(250)]
ys += [10 ** random.uniform(1, 308) for _ in range(200)]
ys = [y for y in ys if y > -1]
write("log1p_ref.txt", mpmath.log1p, ys)
