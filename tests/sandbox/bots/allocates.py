"""Allocates argv[1] MB every argv[2] seconds, forever (or argv[3] MB in total, then waits).

bytearray() zero-fills its buffer, so every page is touched and counts as resident.
"""

import sys
import time

step_mb, pause = int(sys.argv[1]), float(sys.argv[2])
total_mb = int(sys.argv[3]) if len(sys.argv) > 3 else None
held: list[bytearray] = []
while total_mb is None or len(held) * step_mb < total_mb:
    held.append(bytearray(step_mb * 1024 * 1024))
    time.sleep(pause)
print("ready", flush=True)
while True:
    time.sleep(3600)
