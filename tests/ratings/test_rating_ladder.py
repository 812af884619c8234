"""The openskill ladder: direction of updates, mu - 3 sigma ranking, provisional flag."""

from __future__ import annotations

import pytest

from referee.ratings.ladder import PROVISIONAL_SIGMA, Ladder
from referee.ratings.results import GameResult


@pytest.mark.parametrize("model", ["bradley_terry_full", "plackett_luce"])
def test_win_moves_mu_and_draw_between_equals_does_not(model: str) -> None:
    """The winner's mu rises and the loser's falls; both sigmas shrink; a draw between
    equals leaves both mu equal."""
    ladder = Ladder(model)  # type: ignore[arg-type]
    ladder.record(GameResult("a", "b", 1.0))
    (mu_a, sig_a), (mu_b, sig_b) = ladder.rating("a"), ladder.rating("b")
    assert mu_a > 25.0 > mu_b
    assert sig_a < 25.0 / 3 and sig_b < 25.0 / 3
    draw = Ladder(model)  # type: ignore[arg-type]
    draw.record(GameResult("c", "d", 0.5))
    assert draw.rating("c")[0] == pytest.approx(draw.rating("d")[0])


def test_ranked_by_conservative_estimate_and_provisional_until_sigma_drops() -> None:
    """A newcomer with one lucky win stays below an established bot with a better
    mu - 3 sigma, and stays provisional until its sigma falls under the threshold."""
    ladder = Ladder()
    for k in range(30):
        ladder.record(GameResult("vet", f"weak{k % 3}", 1.0 if k % 4 else 0.5))
    ladder.record(GameResult("new", "weak0", 1.0))
    rows = {r.player: r for r in ladder.standings()}
    assert rows["new"].mu > 25.0
    assert rows["vet"].rank < rows["new"].rank
    assert rows["new"].provisional and not rows["vet"].provisional
    assert rows["vet"].ordinal == pytest.approx(rows["vet"].mu - 3 * rows["vet"].sigma)
    for k in range(40):
        ladder.record(GameResult("new", f"weak{k % 3}", 1.0 if k % 3 else 0.0))
    assert ladder.rating("new")[1] <= PROVISIONAL_SIGMA
    assert not {r.player: r for r in ladder.standings()}["new"].provisional


def test_state_round_trips_and_voided_games_change_nothing() -> None:
    """to_dict/from_dict restores the same standings; a voided forfeit moves nobody."""
    ladder = Ladder()
    ladder.record_all([GameResult("a", "b", 1.0), GameResult("b", "c", 0.5)])
    before = ladder.rating("a")
    ladder.record(GameResult("a", "b", 0.0, "time", forfeit=True, void=True))
    assert ladder.rating("a") == before
    again = Ladder.from_dict(ladder.to_dict())
    assert again.standings() == ladder.standings()
    with pytest.raises(ValueError):
        Ladder("glicko")  # type: ignore[arg-type]
