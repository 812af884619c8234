"""Crashes with an uncaught exception."""

print("about to fail", flush=True)
raise RuntimeError("bot bug")
