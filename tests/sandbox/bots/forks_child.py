"""Forks a child that keeps running; argv[1] says how the child hides and what the parent does.

mode: "same-group" (child stays in the bot's group), "new-group" (setpgid), "new-session"
(setsid); then the parent either "exit"s at once or "sleep"s forever. Prints "child <pid>".
"""

import os
import signal
import sys
import time

mode, then = sys.argv[1], sys.argv[2]
pid = os.fork()
if pid == 0:
    if mode == "new-group":
        os.setpgid(0, 0)
    elif mode == "new-session":
        os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)
print(f"child {pid}", flush=True)
print("ready", flush=True)
if then == "exit":
    os._exit(0)
while True:
    time.sleep(3600)
