"""Writes argv[1] MB to stderr as fast as it can, then exits 0."""

import sys

n_mb = int(sys.argv[1])
sys.stderr.write("FIRST LINE\n")
line = b"x" * 1023 + b"\n"
block = line * 1024
for _ in range(n_mb):
    sys.stderr.buffer.write(block)
sys.stderr.buffer.write(b"LAST LINE\n")
sys.stderr.flush()
