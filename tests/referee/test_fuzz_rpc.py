"""Fuzzing every RPC of every service on one real server (127.0.0.1 port 0): random messages
built from the protocol's own descriptors, mutated encodings and raw bytes, sent through raw
method handles (identity serializers) to the Referee stream, the Arena and the Submissions
services. No call may end UNKNOWN (an exception type leaking), INTERNAL (a failure the guard
caught), DEADLINE_EXCEEDED (a hang) or UNAVAILABLE (a dead server); afterwards the server still
serves, and its memory grew by less than :data:`RSS_GROWTH_LIMIT`.

Bounded: a fixed number of examples (derandomized, so every run sends the same ones), each
call with a 10 s deadline. No process is started (the server runs in a thread of this one;
validation games are off), so the test stays in the quick loop: about 40 s on a busy two-core
machine.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import psutil
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import submissions_pb2 as spb
from engine.adjudication.verdicts import Verdict
from referee.live.hub import LiveHub
from referee.rpc.arena import ArenaService
from referee.rpc.uploads import SubmissionService
from referee.server.app import RefereeServer
from referee.server.storedauth import StoredTokenAuth
from referee.storage import (
    FinishedGame,
    Repository,
    SeatResult,
    SourceKind,
    TournamentFormat,
    TournamentSettings,
)
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore

#: How much the process's resident memory may grow over the whole fuzz run.
RSS_GROWTH_LIMIT = 150 * 1024 * 1024
#: Examples per method (12 methods).
EXAMPLES = 30
#: A call not answered by then counts as a hang (generous: the machine may be busy).
CALL_DEADLINE_S = 30
FORBIDDEN = {
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.UNAVAILABLE,
}
SERVICES = [
    pb.DESCRIPTOR.services_by_name["Referee"],
    apb.DESCRIPTOR.services_by_name["Arena"],
    spb.DESCRIPTOR.services_by_name["Submissions"],
]
METHODS: list[MethodDescriptor] = [m for s in SERVICES for m in s.methods]

# -- strategies from the descriptors --------------------------------------------------------

_SAMPLES = ["", "1", "0", "-1", "9" * 30, "tetress", "att", "main", "b0", "b0@1", "t0", "g0"]
_SAMPLES += ["alice", "good", "\x1b[2J", "\u202e", "a\nb", "@", "x/y", "\x00", "\u0661"]
_TEXT = st.one_of(
    st.sampled_from(_SAMPLES),
    st.text(max_size=40),
    st.from_regex(r"[0-9]{1,40}", fullmatch=True),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(0, 70_000)),
)
_INTS = {
    FieldDescriptor.TYPE_INT32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: st.integers(-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: st.integers(0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: st.integers(0, 2**64 - 1),
    FieldDescriptor.TYPE_ENUM: st.integers(-3, 20),
}


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    if field.type == FieldDescriptor.TYPE_STRING:
        return _TEXT
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.one_of(st.binary(max_size=200), st.builds(bytes, st.integers(0, 300_000)))
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    return _INTS[field.type]


def _field(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    sub = field.message_type
    if sub is not None and sub.GetOptions().map_entry:
        key, value = sub.fields_by_name["key"], sub.fields_by_name["value"]
        return st.dictionaries(_scalar(key), _scalar(value), max_size=40)
    one = messages(sub, depth + 1) if sub is not None else _scalar(field)
    if field.is_repeated:
        return st.lists(one, max_size=30)
    return one


def _build(descriptor: Descriptor, values: dict[str, Any]) -> Message:
    message = message_factory.GetMessageClass(descriptor)()
    for name, value in values.items():
        field = descriptor.fields_by_name[name]
        target = getattr(message, name) if field.message_type is not None else None
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            target.update(value)
        elif field.is_repeated and field.message_type is not None:
            for item in value:
                target.add().CopyFrom(item)
        elif field.is_repeated:
            getattr(message, name).extend(value)
        elif field.message_type is not None:
            target.CopyFrom(value)
        else:
            setattr(message, name, value)
    return message


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
    """Any message of ``descriptor``'s type: every field optional, nesting 3 deep at most."""
    fields = [f for f in descriptor.fields if depth < 3 or f.message_type is None]
    optional = {f.name: _field(f, depth) for f in fields}
    return st.fixed_dictionaries({}, optional=optional).map(lambda v: _build(descriptor, v))


def _mutated(data: bytes, flips: list[tuple[int, int]], cut: int, tail: bytes) -> bytes:
    out = bytearray(data)
    for position, value in flips:
        if out:
            out[position % len(out)] = value
    return bytes(out[: cut % (len(out) + 1)]) + tail if cut >= 0 else bytes(out) + tail


def payloads(descriptor: Descriptor) -> st.SearchStrategy[bytes]:
    """Encoded requests: well-formed random messages, mutated encodings and raw bytes."""
    encoded = messages(descriptor).map(lambda m: m.SerializeToString())
    mutated = st.builds(
        _mutated,
        encoded,
        st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6),
        st.integers(-1, 10**6),
        st.binary(max_size=16),
    )
    return st.one_of(encoded, encoded, mutated, st.binary(max_size=300))


@dataclass(frozen=True)
class Call:
    method: MethodDescriptor
    requests: list[bytes]
    token: str


def calls(method: MethodDescriptor, token: str) -> st.SearchStrategy[Call]:
    """Calls of ``method``: one request (or a stream of up to 6), with the player's token, none,
    or a wrong one. The Play stream also gets random Hellos, so sessions get past the first
    message."""
    one = payloads(method.input_type)
    if method.full_name.endswith("Referee.Play"):
        hello = messages(pb.Hello.DESCRIPTOR).map(
            lambda h: pb.BotMessage(hello=h).SerializeToString()
        )
        one = st.one_of(one, hello)
    if method.client_streaming:
        many = st.lists(one, min_size=1, max_size=6)
    else:
        many = one.map(lambda b: [b])
    tokens = st.sampled_from([token, "", "Bearer nonsense"])
    return st.builds(Call, st.just(method), many, tokens)


# -- the server -------------------------------------------------------------------------------


def _populate(repo: Repository) -> str:
    """A player with a token, bots, a tournament and a stored game for the fuzz to find."""
    repo.create_player("alice")
    token = repo.issue_token("alice")
    versions = [
        repo.add_bot_version(f"b{i}", "1", source_kind=SourceKind.REMOTE, location="-")
        for i in range(2)
    ]
    t = repo.create_tournament(
        TournamentSettings(name="t0", format=TournamentFormat.ROUND_ROBIN, game="tetress"),
        [v.id for v in versions],
    )
    when = datetime(2026, 11, 1, tzinfo=UTC)
    repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(versions[0].id), SeatResult(versions[1].id)],
            verdict=Verdict.ILLEGAL_MOVE,
            winner_seat=1,
            offender_seat=0,
            plies=0,
            started_at=when,
            finished_at=when,
            tournament_id=t.id,
            uid="g0",
        )
    )
    return token


@pytest.fixture()
def fuzz_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``(address, token)`` of a referee with every service, in a thread of its own."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    token = _populate(repo)
    ready: list[str] = []
    started, stop = threading.Event(), threading.Event()

    async def run() -> None:
        uploads = SubmissionService(
            Submissions(repo, SubmissionStore(tmp_path / "store")),
            validate=False,
            upload_timeout_s=5,
        )
        server = RefereeServer(
            auth=StoredTokenAuth(repo),
            services=[ArenaService(repo, LiveHub()), uploads],
            hello_timeout=2,
        )
        ready.append(await server.start("127.0.0.1:0"))
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(run(),), daemon=True)
    thread.start()
    assert started.wait(30)
    try:
        yield ready[0], token
    finally:
        stop.set()
        thread.join(30)
        repo.close()


def _send(channel: grpc.Channel, call: Call) -> grpc.StatusCode:
    """Make ``call`` with raw bytes both ways; its final status code."""
    path = f"/{call.method.containing_service.full_name}/{call.method.name}"
    kind = ("stream" if call.method.client_streaming else "unary") + "_"
    kind += "stream" if call.method.server_streaming else "unary"
    handle = getattr(channel, kind)(path, request_serializer=None, response_deserializer=None)
    metadata = [("authorization", f"Bearer {call.token}")] if call.token else []
    request: Any = iter(call.requests) if call.method.client_streaming else call.requests[0]
    try:
        result = handle(request, timeout=CALL_DEADLINE_S, metadata=metadata)
        if call.method.server_streaming:
            for _ in result:
                pass
    except grpc.RpcError as exc:
        code: grpc.StatusCode = exc.code()  # type: ignore[attr-defined]
        return code
    return grpc.StatusCode.OK


def test_fuzzed_requests_to_every_rpc_never_leak_hang_or_kill_the_server(
    fuzz_server: tuple[str, str],
) -> None:
    """Random, mutated and raw requests to every method of the Referee, Arena and
    Submissions services end with a deliberate status (never UNKNOWN, INTERNAL, a hang or a
    dead server); the server then still answers valid calls, within a bounded memory growth."""
    address, token = fuzz_server
    process = psutil.Process()
    seen: dict[str, set[grpc.StatusCode]] = {}
    with grpc.insecure_channel(address) as channel:
        before = process.memory_info().rss

        for method in METHODS:

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(calls(method, token))
            def fuzz(call: Call) -> None:
                code = _send(channel, call)
                seen.setdefault(call.method.name, set()).add(code)
                assert code not in FORBIDDEN, (call.method.full_name, code, call.requests[:1])

            fuzz()
        grown = process.memory_info().rss - before
        ok = apb.ListTournamentsRequest().SerializeToString()
        reply = channel.unary_unary("/tetromino.referee.v1.Arena/ListTournaments")(ok, timeout=10)
        hello = pb.Hello(bot_name="after", token=token, protocol_version=2)
        play = channel.stream_stream("/tetromino.referee.v1.Referee/Play")
        first = next(play(iter([pb.BotMessage(hello=hello).SerializeToString()]), timeout=10))
    assert [t.name for t in apb.ListTournamentsResponse.FromString(reply).tournaments] == ["t0"]
    assert pb.RefereeMessage.FromString(first).WhichOneof("kind") == "welcome"
    print(f"RSS growth {grown / 2**20:.1f} MiB; status codes by method:")
    for name, codes in sorted(seen.items()):
        print(f"  {name}: {', '.join(sorted(c.name for c in codes))}")
    assert set(seen) == {m.name for m in METHODS}, "every method was called"
    assert grown < RSS_GROWTH_LIMIT, f"RSS grew by {grown / 2**20:.0f} MiB"
