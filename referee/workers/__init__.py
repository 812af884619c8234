"""Games played on other machines: a PostgreSQL job queue (procrastinate) and its workers.

With a PostgreSQL database a tournament runner (``referee tournament run``, or the tournaments
``referee serve`` hosts) does not play games of launched bots itself: it enqueues one job per
game (:mod:`.dispatch`) and waits for the stored result. ``referee worker --db URL`` processes
(:mod:`.worker`) take jobs, play the game with both bots launched in the sandbox on their own
machine (:mod:`.job`), and record it. Their moves reach the server's spectators through
PostgreSQL ``NOTIFY`` (:mod:`.live`). Stalled workers are found by their heartbeat and their
games played again elsewhere (:mod:`.recovery`); a game that fails three times is recorded
void, by the tournament's one rule for a game that keeps aborting
(:mod:`referee.tournament.aborts`). The ladder of submitted bots enqueues its games the same
way, each keyed by its game uid (:mod:`.ladderjob`). docs/scaling.md has the picture and the
failure modes.
"""

#: The procrastinate task every game job runs.
TASK_NAME = "arena.play_game"
#: The queue game jobs are put on.
QUEUE = "games"
#: Default seconds between a worker's heartbeats.
HEARTBEAT_S = 5.0
#: Default seconds without a heartbeat after which a worker's games are played elsewhere.
STALL_TIMEOUT_S = 30.0
