"""The kernel settings that keep bwrap from making user namespaces are each named with their
fix, whatever bwrap's own words (Debian's switch, Ubuntu's AppArmor restriction, the count);
read from ``/proc/sys`` in real use, given here as a kernel that has them would answer."""

from __future__ import annotations

import pytest

from referee.sandbox import hostcheck

BWRAP_LINE = "bwrap: setting up uid map: Permission denied"


@pytest.mark.parametrize(
    ("setting", "value", "fix"),
    [
        ("kernel.unprivileged_userns_clone", "0", "sysctl -w kernel.unprivileged_userns_clone=1"),
        ("kernel.apparmor_restrict_unprivileged_userns", "1", "AppArmor profile"),
        ("user.max_user_namespaces", "0", "sysctl -w user.max_user_namespaces="),
    ],
)
def test_each_blocking_setting_is_named_with_its_fix(
    monkeypatch: pytest.MonkeyPatch, setting: str, value: str, fix: str
) -> None:
    """The finding names the setting as ``name=value`` and says how to change it."""
    monkeypatch.setattr(hostcheck, "sysctl", lambda name: value if name == setting else None)
    found = hostcheck.explain_bwrap_failure(BWRAP_LINE)
    assert f"{setting}={value}" in found.reason and fix in found.fix


def test_a_python_failure_from_bwrap_is_blamed_on_namespaces_not_permissions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the sandboxed Python cannot start because bwrap (as the bots' uid) may not make a
    namespace, the line speaks of namespaces, not of file permissions."""
    blocked = {"kernel.apparmor_restrict_unprivileged_userns": "1"}
    monkeypatch.setattr(hostcheck, "sysctl", blocked.get)
    found = hostcheck._python_failure(BWRAP_LINE)
    assert "AppArmor" in found.reason and "chmod" not in found.fix


def test_a_python_failure_of_its_own_says_what_to_make_readable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An import failure inside the sandbox (no namespace trouble) points at permissions."""
    monkeypatch.setattr(hostcheck, "sysctl", lambda name: None)
    monkeypatch.setattr(hostcheck, "first_unreadable", lambda: None)
    found = hostcheck._python_failure("AssertionError: cannot find grpc")
    assert found.reason.startswith(hostcheck.PYTHON_FAILURE) and "chmod -R o+rX" in found.fix
