"""``referee serve``'s options read once from the command line into a typed configuration
(:class:`ServeConfig`): what is built from them (``services.py``) and each step of start-up
(``serve.py``, the uploads and the ladder in ``_uploads.py``) read it, never the ``Namespace``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.match.clock import TimeControl
    from referee.server.app import TlsFiles
    from referee.submissions.limits import UploadLimits


#: The options that set an :class:`~referee.submissions.limits.UploadLimits` field: (option,
#: field, whether it is given in MB (a decimal number) rather than as a whole count, help).
LIMIT_OPTIONS: tuple[tuple[str, str, bool, str], ...] = (
    ("--upload-max-mb", "max_archive_bytes", True, "largest archive accepted"),
    ("--upload-max-unpacked-mb", "max_unpacked_bytes", True, "largest unpacked size"),
    ("--upload-max-files", "max_files", False, "most files in one archive"),
    ("--upload-rate", "max_submissions_per_window", False, "uploads per player per hour"),
    (
        "--upload-quota-mb",
        "max_stored_bytes_per_player",
        True,
        "stored code per player, all versions",
    ),
)


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """``--tls-cert``, ``--tls-key`` and ``--tls-client-ca`` (``None``: not given)."""

    cert: str | None = None
    key: str | None = None
    client_ca: str | None = None

    def files(self) -> TlsFiles | None:
        """The listener's TLS files, read once now so a bad file stops ``serve`` before it
        listens (``None``: plain text; ``ValueError`` for options that do not go together)."""
        from referee.server.app import TlsFiles

        if bool(self.cert) != bool(self.key):
            raise ValueError("--tls-cert and --tls-key go together")
        if self.client_ca and not self.cert:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
        if not self.cert or not self.key:
            return None
        tls = TlsFiles(self.cert, self.key, self.client_ca)
        tls.credentials()
        return tls


@dataclass(frozen=True, slots=True)
class UploadConfig:
    """``--submissions`` and what it runs: the upload limits, validation games, the ladder."""

    #: The store folder (``None``: no uploads, no ladder of submitted bots).
    store: str | None
    limits: UploadLimits
    validation_game: str
    #: The served game's ``--param`` values when it is the validation game (else none).
    validation_params: dict[str, int]
    validation_concurrency: int
    ladder_games_per_hour: float
    ladder_concurrency: int
    #: ``--no-sandbox`` and ``--allow-unsandboxed-uploads``.
    no_sandbox: bool
    allow_unsandboxed: bool


@dataclass(frozen=True, slots=True)
class WebConfig:
    """The web front on the referee's loop."""

    #: ``--web`` (``None``: the default address, skipped when taken).
    address: str | None
    off: bool
    proxy_headers: bool
    secure_cookies: bool
    publish_thinking: str


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """Every option of ``referee serve``, typed."""

    #: ``--game`` (empty: every registered game), with the ``--param`` values.
    games: tuple[str, ...]
    params: dict[str, int]
    default_game: str | None
    time_control: TimeControl
    memory_mb: float
    listen: tuple[str, ...]
    tls: TlsOptions
    #: ``--tokens`` FILE; ``--db`` URL (``create``: a new SQLite file may be made).
    tokens: str | None
    db: str | None
    create: bool
    rate_channels: bool
    #: ``--pair auto``: the matchmaker pairs free bots.
    pair: bool
    records: str | None
    challenge_wait: float
    max_challenges: int
    remote_timeout: float
    no_sandbox: bool
    in_process: bool
    address_file: str | None
    shutdown_grace: float
    reconnect_window: float
    max_sessions: int
    keepalive: float
    #: ``--max-logins``: logins in progress at once, in all and from one address.
    max_logins: tuple[int, int]
    allow_duplicate_sessions: bool
    metrics_listen: str | None
    web: WebConfig
    uploads: UploadConfig


def serve_config(args: argparse.Namespace) -> ServeConfig:
    """``referee serve``'s parsed options as a :class:`ServeConfig` (``ValueError`` naming a
    clock or memory option out of range)."""
    from referee.commands._common import game_params, time_control

    params = game_params(args)
    total, per_address = args.max_logins
    return ServeConfig(
        games=tuple(args.game),
        params=params,
        default_game=args.default_game,
        time_control=time_control(args),
        memory_mb=args.memory,
        listen=tuple(args.listen),
        tls=TlsOptions(args.tls_cert, args.tls_key, args.tls_client_ca),
        tokens=args.tokens,
        db=args.db,
        create=args.create,
        rate_channels=args.rate_channels,
        pair=args.pair == "auto",
        records=args.records,
        challenge_wait=args.challenge_wait,
        max_challenges=args.max_challenges,
        remote_timeout=args.remote_timeout,
        no_sandbox=args.no_sandbox,
        in_process=args.in_process,
        address_file=args.address_file,
        shutdown_grace=args.shutdown_grace,
        reconnect_window=args.reconnect_window,
        max_sessions=args.max_sessions,
        keepalive=args.keepalive,
        max_logins=(total, per_address),
        allow_duplicate_sessions=args.allow_duplicate_sessions,
        metrics_listen=args.metrics_listen,
        web=WebConfig(
            address=args.web,
            off=args.no_web,
            proxy_headers=args.web_proxy_headers,
            secure_cookies=args.web_secure_cookies,
            publish_thinking=args.publish_thinking,
        ),
        uploads=_upload_config(args, params),
    )


def _upload_config(args: argparse.Namespace, params: dict[str, int]) -> UploadConfig:
    limits = upload_limits(
        {
            "--upload-max-mb": args.upload_max_mb,
            "--upload-max-unpacked-mb": args.upload_max_unpacked_mb,
            "--upload-max-files": args.upload_max_files,
            "--upload-rate": args.upload_rate,
            "--upload-quota-mb": args.upload_quota_mb,
        }
    )
    return UploadConfig(
        store=args.submissions,
        limits=limits,
        validation_game=args.validation_game,
        # The served game's --param settings (e.g. a turn limit) hold for its validation too.
        validation_params=params if args.validation_game in args.game else {},
        validation_concurrency=args.validation_concurrency,
        ladder_games_per_hour=args.ladder_games_per_hour,
        ladder_concurrency=args.ladder_concurrency,
        no_sandbox=args.no_sandbox,
        allow_unsandboxed=args.allow_unsandboxed_uploads,
    )


def upload_limits(values: dict[str, float]) -> UploadLimits:
    """The limits the ``--upload-*`` options set: ``values`` by option (sizes in MB)."""
    import dataclasses

    from referee.submissions.limits import DEFAULT_LIMITS, MB

    fields: dict[str, int] = {}
    for option, field, in_mb, _ in LIMIT_OPTIONS:
        value = values[option]
        fields[field] = int(value * MB) if in_mb else int(value)
    return dataclasses.replace(DEFAULT_LIMITS, **fields)
