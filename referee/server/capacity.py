"""How much one server admits by default: sessions held, logins in progress, challenges open.

Plain numbers, apart from the admission machinery that enforces them, so that the ``referee``
command can show them as option defaults without importing the server.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_ANSWER_S",
    "DEFAULT_MAX_CHALLENGES",
    "DEFAULT_MAX_HANDSHAKES",
    "DEFAULT_MAX_HANDSHAKES_PER_ADDRESS",
    "DEFAULT_MAX_SESSIONS",
]

#: Sessions one server holds by default (an idle session costs about 46 KB; see
#: docs/referee.md). Past it new sessions are refused with ``ERROR_CODE_RESOURCE_EXHAUSTED``
#: and the SDK retries with back-off.
DEFAULT_MAX_SESSIONS = 5000

#: Handshakes (streams not yet past their token check) in progress at once, in all and from
#: one client address. They are separate from ``max_sessions``: a flood of streams that never
#: authenticate cannot hold the places of real sessions, nor unbounded memory.
DEFAULT_MAX_HANDSHAKES = 1000
DEFAULT_MAX_HANDSHAKES_PER_ADDRESS = 100

#: How long a challenged bot has to answer (and, before that, to become free).
DEFAULT_ANSWER_S = 30.0
#: How many challenges one player may have open at once (more are refused at once).
DEFAULT_MAX_CHALLENGES = 3
