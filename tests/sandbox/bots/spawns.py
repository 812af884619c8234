"""Spawns without end: ``threads`` starts sleeping threads until one is refused, then dies of
it; ``forks`` is a fork bomb (every process keeps forking, refusals are ignored)."""

import os
import sys
import threading
import time

mode = sys.argv[1]
if mode == "threads":
    started = 0
    try:
        while True:
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            started += 1
    except RuntimeError as e:
        print(f"refused after {started} threads: {e}", flush=True)
        raise
else:
    print("bombing", flush=True)
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.001)
