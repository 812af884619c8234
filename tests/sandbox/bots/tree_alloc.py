"""Parent and forked child each hold argv[1] MB; neither alone is over the limit, both are."""

import os
import sys
import time

n = int(sys.argv[1]) * 1024 * 1024
pid = os.fork()
if pid:
    print(f"child {pid}", flush=True)
else:
    time.sleep(0.05)  # let the parent report the child's pid before the memory grows
held = bytearray(n)
if pid:
    print("ready", flush=True)
while True:
    time.sleep(3600)
