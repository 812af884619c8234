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
way, each keyed by its game uid (:mod:`.ladderjob`), and so does the validation of uploads
(:mod:`.validationjob`), whose first checks have a queue and a slot on every worker of their
own. docs/scaling.md has the picture and the failure modes.
"""

#: The procrastinate task every game job runs.
TASK_NAME = "arena.play_game"
#: The queue game jobs are put on (tournament, ladder and grading games, full validations).
QUEUE = "games"
#: The queue of uploads' first checks: every worker takes them in its general slots (by their
#: priority, as any job) and in :data:`FIRST_CHECK_SLOTS` slots of its own that take nothing
#: else, so a first check never waits for a long game to end (:mod:`.worker`).
FIRST_CHECK_QUEUE = "first_checks"
#: Every queue the workers take jobs from.
QUEUES = (QUEUE, FIRST_CHECK_QUEUE)
#: The slots each worker keeps for first checks, besides its ``--concurrency``.
FIRST_CHECK_SLOTS = 1
#: Default seconds between a worker's heartbeats.
HEARTBEAT_S = 5.0
#: Default seconds without a heartbeat after which a worker's games are played elsewhere.
STALL_TIMEOUT_S = 30.0
