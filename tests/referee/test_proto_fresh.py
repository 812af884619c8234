"""The committed generated protocol code matches the .proto files."""

from __future__ import annotations

from pathlib import Path

from referee.tools import genproto


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    """Regenerating from protos/ into a temp dir gives byte-identical files to client_sdk/proto."""
    fresh = genproto.generate(tmp_path)
    assert fresh, "no generated files"
    committed = sorted(
        p
        for p in genproto.OUT_DIR.iterdir()
        if p.name.endswith(("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi"))
    )
    assert [p.name for p in committed] == [p.name for p in fresh], (
        "generated file set differs; run python -m referee.tools.genproto"
    )
    stale = [p.name for p in fresh if p.read_bytes() != (genproto.OUT_DIR / p.name).read_bytes()]
    assert not stale, f"stale generated code {stale}; run python -m referee.tools.genproto"


def test_descriptor_names_the_versioned_package() -> None:
    """The wire package is tetromino.referee.v1 with a bidirectional Play stream."""
    from client_sdk.proto import referee_pb2

    service = referee_pb2.DESCRIPTOR.services_by_name["Referee"]
    assert service.full_name == "tetromino.referee.v1.Referee"
    play = service.methods_by_name["Play"]
    assert play.client_streaming and play.server_streaming
