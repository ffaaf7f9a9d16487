"""Fixtures for the framework-integration tests: real servers, started per test."""

from __future__ import annotations

import pytest

from .servers import ModelServer


@pytest.fixture
def model_server():
    """A fresh ``ModelServer`` (city ``"Paris"``) on a free 127.0.0.1 port; stopped after the test."""
    with ModelServer() as server:
        yield server


@pytest.fixture
def mcp_log(tmp_path):
    """Path of the JSON-lines file the stdio MCP server appends one line to per live call
    (pass it to ``servers.mcp_stdio_params``)."""
    return tmp_path / "mcp_calls.jsonl"


@pytest.fixture(autouse=True)
def _fresh_tool_declarations(monkeypatch):
    """Each test starts with no read declared in the process (``@tracetui.tool(read=True)`` declares its tool
    for every later session: a read declared by one test would make another's MCP hint moot)."""
    from tracetui.core.harness import ambient

    monkeypatch.setattr(ambient, "_DECLARED_READS", set())
