"""``referee sprt NEW BASE``: is NEW stronger than BASE? Game pairs until the GSPRT decides."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from engine.game import Game
    from engine.records.openings import Book
    from referee.analysis.sprt import Decision, Sprt
    from referee.analysis.sprt_run import GameSink, PairResult, PlayGame
    from referee.match.report import GameReport
    from referee.play.game import GamePlayer
    from referee.play.seats import SeatFinder
    from referee.server.app import RefereeServer
    from referee.storage import BotVersionInfo, Repository

from referee.commands._arena import fail
from referee.commands._common import (
    Subparsers,
    add_game_options,
    configure_logs,
)
from referee.commands._tools_options import add_pair_book_option, add_tool_run_options, pair_book
from referee.errors import RefereeError
from referee.tournament import DEFAULT_REMOTE_WAIT_S


class RemoteAbsent(RefereeError):
    """A remote bot was not connected (or never free) within ``--remote-timeout``."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "sprt",
        help="test whether NEW is stronger than BASE (sequential probability ratio test)",
        description=(
            "Play game pairs (one opening, sides swapped) between two bots, launched or remote, "
            "until the "
            "generalized SPRT on the pentanomial pair results accepts H0 (NEW is not stronger "
            "by ELO1) or H1 (NEW is stronger by at least ELO0). Elo is logistic. Every game is "
            "stored like other games. See docs/tools.md."
        ),
    )
    parser.add_argument(
        "new", metavar="NEW", help="the candidate bot (launchable, registered or remote)"
    )
    parser.add_argument("base", metavar="BASE", help="the bot to compare with")
    parser.add_argument("--elo0", type=float, default=0.0, help="H0's Elo (default 0)")
    parser.add_argument("--elo1", type=float, default=10.0, help="H1's Elo (default 10)")
    parser.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (default 0.05)")
    parser.add_argument("--beta", type=float, default=0.05, help="false H0 rate (default 0.05)")
    parser.add_argument("--concurrency", type=int, default=1, help="pairs at once (default 1)")
    parser.add_argument("--max-pairs", type=int, help="stop undecided after this many pairs")
    add_pair_book_option(parser)
    parser.add_argument(
        "--listen",
        metavar="ADDR",
        help="serve the referee here for remote bots (default with a remote bot: 127.0.0.1:50051)",
    )
    parser.add_argument(
        "--remote-timeout",
        type=float,
        default=DEFAULT_REMOTE_WAIT_S,
        metavar="S",
        help="how long to wait for a remote bot to connect, before the first game and for each "
        "game, before the run ends with an error (default %(default)g s)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    add_game_options(parser)
    add_tool_run_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure_logs(args)
    try:
        setup = _setup(args)
    except (ValueError, KeyError, TypeError) as exc:
        return fail("sprt", exc)
    test, versions = setup.test, setup.versions
    new, base = versions[0].label, versions[1].label
    out = sys.stderr if args.json else sys.stdout
    print(
        f"SPRT {new} vs {base}: H0 elo <= {args.elo0:g}, H1 elo >= {args.elo1:g}, "
        f"alpha {args.alpha:g}, beta {args.beta:g}; bounds ({test.lower:+.2f}, {test.upper:+.2f})",
        file=out,
        flush=True,
    )
    try:
        decision = _play(args, setup, out)
    except (RemoteAbsent, ValueError) as exc:
        return fail("sprt", exc)
    sentence = test.sentence(new, base)
    print(sentence, file=out, flush=True)
    if args.json:
        est = test.estimate()
        result = {
            "decision": decision.value,
            "sentence": sentence,
            "llr": test.llr,
            "lower": test.lower,
            "upper": test.upper,
            "pairs": test.pairs,
            "pentanomial": test.counts,
            "elo": est.elo,
            "elo_low": est.low,
            "elo_high": est.high,
        }
        print(json.dumps(result))
    return 0 if decision.value != "continue" else 1


@dataclass(frozen=True, slots=True)
class _Setup:
    """What a test runs with, checked before any game."""

    test: Sprt
    #: ``Game[Any]``: the game's state type is whichever game was asked for.
    game: Game[Any]
    book: Book | None
    repo: Repository
    #: The new version first, the base second.
    versions: list[BotVersionInfo]

    def may_import_numpy(self) -> bool:
        """Whether a launched bot of the test may import NumPy (its warm sandboxes then do)."""
        from referee.play.bots import launch_spec
        from referee.sandbox.warm import may_import_numpy
        from referee.storage import SourceKind

        launched = [v for v in self.versions if v.source_kind is not SourceKind.REMOTE]
        return may_import_numpy(launch_spec(v) for v in launched)


def _setup(args: argparse.Namespace) -> _Setup:
    """The test, the game, the book, the database and both bots (``ValueError`` if bad)."""
    from engine.registry import load_game
    from referee.analysis.sprt import Sprt
    from referee.commands._arena import open_repo
    from referee.commands._common import game_params
    from referee.play.bots import resolve_bot

    test = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
    game = load_game(args.game, **game_params(args))
    book = pair_book(args, game)
    if args.concurrency < 1 or (args.max_pairs is not None and args.max_pairs < 1):
        raise ValueError("--concurrency and --max-pairs must be at least 1")
    if not args.remote_timeout > 0:
        raise ValueError("--remote-timeout must be a number of seconds > 0")
    repo = open_repo(args)
    versions = [resolve_bot(repo, args.new), resolve_bot(repo, args.base)]
    return _Setup(test, game, book, repo, versions)


def _play(args: argparse.Namespace, setup: _Setup, out: TextIO) -> Decision:
    """Run the pairs, printing a status line per pair; the decision."""
    import asyncio

    from referee.analysis.sprt import Decision

    try:
        return asyncio.run(_play_async(args, setup, out))
    except KeyboardInterrupt:
        print("interrupted", file=out)
        return Decision.CONTINUE


async def _play_async(args: argparse.Namespace, setup: _Setup, out: TextIO) -> Decision:
    """Games through the tournament's :class:`GamePlayer`: launched bots on private referees,
    or, with a remote bot (or ``--listen``), all on one served referee."""
    import math

    from referee.analysis.sprt_run import run_sprt
    from referee.commands._common import announce_isolation, time_control
    from referee.commands._remote import remote_owners, start_referee
    from referee.live.hub import LiveHub
    from referee.play.game import GamePlayer, GameTerms
    from referee.sandbox.isolation import Isolation
    from referee.sandbox.warm import WarmTerms, demand
    from referee.storage import SourceKind

    game, repo, versions = setup.game, setup.repo, setup.versions
    # Launched bots: the sandbox where it works here, unless --no-sandbox.
    isolation = announce_isolation(args.no_sandbox, "referee sprt")
    new, base = versions[0].label, versions[1].label
    terms = GameTerms(
        game=game,
        time_control=time_control(args),
        memory_mb=math.ceil(args.memory) or None,
        connect_timeout=30.0,
        remote_timeout=args.remote_timeout,
        isolation=isolation,
    )
    owners = remote_owners(repo, versions)
    remote = any(v.source_kind is SourceKind.REMOTE for v in versions)
    server = None
    if remote or args.listen:
        private = isolation is Isolation.BWRAP
        server = await start_referee(repo, game.name, args.listen, LiveHub(), "this SPRT", private)
    try:
        player = GamePlayer(terms, server.handle() if server is not None else None)
        concurrency = args.concurrency
        if player.seats is not None and server is not None:
            player.seats.owners.update(owners)
            concurrency = await _await_remote(args, player.seats, versions, owners, server, out)

        def on_pair(pair: PairResult, t: Sprt) -> None:
            line = f"pair {pair.number + 1:>4} {pair.opening:>12} {pair.points:g}/2  {t.status()}"
            print(line, file=out, flush=True)

        # Launched bots start ahead of need: two per game a worker may start next.
        slots, launches = 0 if remote else 2 * concurrency, WarmTerms(memory_mb=terms.memory_mb)
        async with demand(slots, launches, isolation, numpy=setup.may_import_numpy()):
            return await run_sprt(
                setup.test,
                _games(player, versions, args.remote_timeout),
                book=setup.book,
                concurrency=concurrency,
                max_pairs=args.max_pairs,
                labels={"sprt": f"{new} vs {base}"},
                on_pair=on_pair,
                sink=_store(repo, game, versions, f"sprt {new} vs {base}"),
            )
    finally:
        if server is not None:
            await server.stop(0.5)


async def _await_remote(
    args: argparse.Namespace,
    seats: SeatFinder,
    versions: Sequence[BotVersionInfo],
    owners: dict[int, str],
    server: RefereeServer,
    out: TextIO,
) -> int:
    """Wait for the remote bots to connect (``RemoteAbsent`` after ``--remote-timeout``); the
    concurrency to use: a remote bot plays at most as many games at once as its sessions
    offer (the Hello's ``max_games``; the Python SDK offers 1, so its games are serialised)."""
    from referee.commands._remote import connect_hint, wait_connected
    from referee.storage import SourceKind

    address = server.addresses[0]
    remote = [v for v in versions if v.source_kind is SourceKind.REMOTE]
    for v in remote:
        hint = connect_hint(address, owners[v.id], v)
        wait = f"{args.remote_timeout:g} s"
        print(f"waiting up to {wait} for remote bot {v.label}: {hint}", file=out, flush=True)
    missing = await wait_connected(seats, versions, args.remote_timeout)
    if missing:
        raise RemoteAbsent(_absent_sentence(missing[0], args.remote_timeout))
    concurrency = args.concurrency
    for v in remote:
        slots = seats.capacity(v)
        if slots < concurrency:
            print(
                f"{v.label} plays {slots} game(s) at once: pairs run {slots} at a time",
                file=out,
                flush=True,
            )
            concurrency = max(1, slots)
    return int(concurrency)


def _games(player: GamePlayer, versions: Sequence[BotVersionInfo], timeout: float) -> PlayGame:
    """One SPRT game through ``player`` (``RemoteAbsent`` when a remote seat never came)."""
    import uuid

    async def play(new_seat: int, labels: dict[str, str], opening: Sequence[str]) -> GameReport:
        seats = list(versions) if new_seat == 0 else list(versions[::-1])
        played = await player.play(seats, uuid.uuid4().hex, labels, None, opening)
        if played.absent:
            raise RemoteAbsent(_absent_sentence(seats[played.absent[0]], timeout))
        return played.report

    return play


def _absent_sentence(version: BotVersionInfo, timeout: float) -> str:
    return (
        f"remote bot {version.label} was not connected within {timeout:g} s "
        "(--remote-timeout); no decision"
    )


def _store(
    repo: Repository, game: Game[Any], versions: Sequence[BotVersionInfo], event: str
) -> GameSink:
    """Store each game as the tournament runner does (standalone games, event ``sprt ...``)."""
    from referee.play.store import Filing, store_game

    def sink(report: GameReport, new_seat: int, started: datetime, finished: datetime) -> None:
        seats = versions if new_seat == 0 else versions[::-1]
        store_game(repo, report, game, seats, Filing(event), started=started, finished=finished)

    return sink
