"""``referee doctor``: whether this host gives the referee everything it uses (see checks.py)."""

from referee.doctor.checks import CHECKS, Check, Context, Status, run_checks

__all__ = ["CHECKS", "Check", "Context", "Status", "run_checks"]
