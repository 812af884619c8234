"""Serving an ASGI app with uvicorn on the caller's event loop (the web front, ``/metrics``)."""
