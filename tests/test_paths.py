"""Tests for react_agent._paths: the data and cache folders and their overrides."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from react_agent._paths import cache_dir, data_dir


@pytest.mark.parametrize(
    ("folder", "override", "xdg", "linux_default"),
    [
        (data_dir, "REACT_AGENT_DATA", "XDG_DATA_HOME", ".local/share/react-agent"),
        (cache_dir, "REACT_AGENT_CACHE", "XDG_CACHE_HOME", ".cache/react-agent"),
    ],
)
def test_folders_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, folder: Callable[[], Path], override: str,
    xdg: str, linux_default: str,
) -> None:
    monkeypatch.delenv(override, raising=False)
    monkeypatch.delenv(xdg, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert "react-agent" in folder().parts
    if Path("/proc").is_dir():  # Linux: the XDG base directories
        assert folder() == tmp_path / linux_default
        monkeypatch.setenv(xdg, str(tmp_path / "xdg"))
        assert folder() == tmp_path / "xdg" / "react-agent"
    monkeypatch.setenv(override, str(tmp_path / "mine"))
    assert folder() == tmp_path / "mine"
