"""Generated gRPC/protobuf code for the referee protocol (``protos/``); do not edit.

Regenerate with ``python -m referee.tools.genproto``. Shared by the SDK and the referee.
"""
