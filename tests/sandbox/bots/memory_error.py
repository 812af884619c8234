"""Asks for argv[1] MB in one allocation; under RLIMIT_DATA that raises MemoryError."""

import sys

data = bytearray(int(sys.argv[1]) * 1024 * 1024)
print("allocated", len(data), flush=True)
