"""Daemonises a grandchild (fork, setsid, fork, intermediate exits), then exits itself.

The grandchild leaves the bot's session and process group and is re-parented away from the
bot's tree before anyone can see it there. Prints "grandchild <pid>".
"""

import os
import signal
import time

r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    gpid = os.fork()
    if gpid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(3600)
    os.write(w, str(gpid).encode())
    os._exit(0)
os.close(w)
gpid = int(os.read(r, 64))
print(f"grandchild {gpid}", flush=True)
print("ready", flush=True)
os._exit(0)
