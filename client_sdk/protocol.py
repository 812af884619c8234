"""The protocol's bounds that both ends apply beyond the messages' shapes
(:mod:`client_sdk.proto`): a move's text longer than :data:`MAX_ACTION_CHARS` is a protocol
violation, judged by the referee in a game and by ``python -m client_sdk reproduce`` when it
replays one, in the same words."""

from client_sdk._messages import MAX_ACTION_CHARS, action_problem

__all__ = ["MAX_ACTION_CHARS", "action_problem"]
