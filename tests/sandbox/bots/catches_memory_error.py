"""Survives a refused allocation, then crashes for an unrelated reason."""

import sys

try:
    bytearray(int(sys.argv[1]) * 1024 * 1024)
except MemoryError:
    print("MemoryError caught, carrying on", flush=True)
raise KeyError("unrelated")
