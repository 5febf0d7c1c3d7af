#!/usr/bin/python3
"""Write workloads/testdata/gaussian-linear.npy, the weight fixture of
`stcsim prune --transposable`'s examples and tests: a Linear weight of
128 outputs x 256 inputs, float32, every value drawn from N(0, 1/256)
(PyTorch-style fan-in scaling) by Python's own seeded generator, so the
file is the same on every machine. Standard library only:

    python3 scripts/make-weight-fixture.py [OUT.npy]
"""
import random
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "workloads/testdata/gaussian-linear.npy"
ROWS, COLS = 128, 256

rng = random.Random(20261207)
values = [rng.gauss(0.0, 1.0 / 16.0) for _ in range(ROWS * COLS)]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (ROWS, COLS)
# .npy v1.0: magic, version, header length; header padded with spaces to
# a multiple of 64 bytes with the preamble, ending in a newline.
pad = 64 - (10 + len(header) + 1) % 64
header = header + " " * pad + "\n"
with open(OUT, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00")
    f.write(struct.pack("<H", len(header)))
    f.write(header.encode("latin1"))
    f.write(struct.pack("<%df" % len(values), *values))
