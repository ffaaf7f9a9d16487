"""The rules of core/harness/ambient.py (the ambient session: ``tracetui.record`` / ``tracetui.replay`` around an
unchanged agent), pinned on sessions built and opened in the test (a temporary folder, no agent, no network): the
errors of a bad mode, what a session takes from its arguments and from the recording (reads, key, agent name and
reference, clock, seed, input), the read list's hints and the live rule, ids and prompt hashes, which session is
current, and what the header says of a recording and of a replay."""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import tracetui
from tracetui.core.errors import HarnessError
from tracetui.core.harness import ambient
from tracetui.core.harness.ambient import HarnessSession, current_session, record_session, replay_session
from tracetui.core.harness.context import LLM_MODES
from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.run import REPLAY_MODES
from tracetui.core.harness.sandbox import ISOLATION_GUARD
from tracetui.core.readers import read_trace

KEY_TEXT = "ambient-rules-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY_TEXT)
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    monkeypatch.setattr(ambient, "_DECLARED_READS", {"declared_read"})
    monkeypatch.setattr(sys, "argv", ["/somewhere/app.py"])


@tracetui.tool(read=True)
def get_order(order_id: str) -> dict[str, str]:
    """A read the recordings below make once."""
    return {"order_id": order_id, "status": "shipped"}


def _recording(path: str = "rec.jsonl", **header: Any) -> Any:
    """A recorded run (agent ``rec-agent``, ``get_order`` a read, seed 7), read back; ``header`` fields replaced."""
    with record_session(path, read_tools=["get_order"], agent="rec-agent", seed=7, agent_ref="examples/rec.py",
                        input={"q": 1}) as s:
        get_order("A1")
        s.output = "ok"
    trace = read_trace(path)
    for k, v in header.items():
        if v is None:
            trace.header.pop(k, None)
        else:
            trace.header[k] = v
    return trace


def _header(path: str) -> dict[str, Any]:
    return read_trace(path).header


# ----------------------------------------------------------------------------- bad arguments


def test_a_bad_mode_llm_mode_fixture_or_allow_live_outside_loose_is_refused_with_what_to_use() -> None:
    with pytest.raises(HarnessError) as e:
        HarnessSession("replay", "out.jsonl")
    assert str(e.value) == f"mode 'replay': use record or one of {', '.join(REPLAY_MODES)}"
    with pytest.raises(HarnessError) as e:
        HarnessSession("fixture", "out.jsonl")
    assert str(e.value) == ("fixture mode needs a fixture store: use tracetui replay AGENT --mode fixture "
                            "(run(ctx, input) agents) for now; ambient sessions replay strict or loose")
    with pytest.raises(HarnessError) as e:
        HarnessSession("record", "out.jsonl", llm="warm")
    assert str(e.value) == f"LLM mode 'warm': use one of {', '.join(LLM_MODES)}"
    rec = _recording()
    with pytest.raises(HarnessError) as e:
        HarnessSession("strict", "out.jsonl", recording=rec, allow_live=True)
    assert str(e.value) == "allow_live only applies to mode='loose'"
    assert HarnessSession("loose", "out.jsonl", recording=rec, allow_live=True).live_allowed("get_order")


def test_an_ambient_session_runs_no_agent_function() -> None:
    s = HarnessSession("record", "out.jsonl")
    with pytest.raises(HarnessError) as e:
        s.spec.run(None, None)
    assert str(e.value) == "an ambient session runs no agent function"


# ----------------------------------------------------------------------------- what a session takes


def test_a_recording_calls_the_model_live_and_a_replay_as_asked() -> None:
    assert HarnessSession("record", "o.jsonl", llm="frozen").llm_mode == "live"
    rec = _recording()
    assert HarnessSession("strict", "o.jsonl", recording=rec).llm_mode == "frozen"
    assert HarnessSession("strict", "o.jsonl", recording=rec, llm="live").llm_mode == "live"


def test_a_new_session_has_no_output_and_a_replay_says_it_has_the_guard_alone() -> None:
    s = HarnessSession("record", "o.jsonl")
    assert s.output is None and s.isolation is None and s.result is None and s.notes == []
    assert HarnessSession("strict", "o.jsonl", recording=_recording()).isolation == ISOLATION_GUARD


def test_the_reads_are_the_given_ones_the_recorded_ones_and_the_declared_ones() -> None:
    s = HarnessSession("record", "o.jsonl", read_tools=["get_weather"])
    assert s.is_read("get_weather") and s.is_read("declared_read") and not s.is_read("send_mail")
    assert s.spec.read_tools == frozenset({"get_weather"})
    r = HarnessSession("strict", "o.jsonl", recording=_recording(), read_tools=["extra"])
    assert r.is_read("get_order") and r.is_read("extra") and not r.is_read("send_mail")


@pytest.mark.parametrize("read_tools", [None, "get_order"])
def test_a_recording_whose_read_list_is_missing_or_not_a_list_adds_no_reads(read_tools: Any) -> None:
    rec = _recording()
    if read_tools is None:
        rec.header.pop("read_tools")
    else:
        rec.header["read_tools"] = read_tools
    s = HarnessSession("strict", "o.jsonl", recording=rec, read_tools=["extra"])
    assert s.is_read("extra") and not s.is_read("get_order") and not s.is_read("g")


def test_a_hint_makes_a_read_noted_once_and_a_read_already_is_not_noted() -> None:
    s = HarnessSession("record", "o.jsonl", read_tools=["get_weather"])
    s.hinted_read("search", "the mcp server")
    s.hinted_read("get_weather", "the mcp server")
    assert s.is_read("search")
    assert s.notes == ["search: taken as a read on the mcp server's readOnlyHint (a hint, not trusted: never sent "
                       "live in replay)"]


def test_only_a_loose_replay_allowed_live_sends_a_read_on_the_read_list_live() -> None:
    rec = _recording()
    loose = HarnessSession("loose", "o.jsonl", recording=rec, allow_live=True, read_tools=["extra"])
    assert loose.live_allowed("get_order") and loose.live_allowed("extra") and loose.live_allowed("declared_read")
    assert not loose.live_allowed("send_mail")
    loose.hinted_read("search", "mcp")
    assert not loose.live_allowed("search")  # a hinted read is never sent live
    strict = HarnessSession("strict", "o.jsonl", recording=rec)
    assert strict.live_allowed("get_order") is False


def test_the_key_is_the_given_file_and_a_recording_creates_the_project_key(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "my.key"
    key_file.write_text("a-key-file-of-at-least-16-chars")
    s = HarnessSession("record", "o.jsonl", key_file=str(key_file))
    assert s.redactor.key_id == Redactor(b"a-key-file-of-at-least-16-chars").key_id
    monkeypatch.delenv("TRACETUI_REDACTION_KEY")
    fresh = HarnessSession("record", "o.jsonl")
    assert (tmp_path / ".tracetui" / "redaction.key").exists() and fresh.notes == []


def test_a_replay_without_a_key_uses_a_one_off_key_and_names_the_recordings(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _recording()
    key_id = rec.header["redaction"]["key_id"]
    monkeypatch.delenv("TRACETUI_REDACTION_KEY")
    s = HarnessSession("strict", "o.jsonl", recording=rec)
    assert not (tmp_path / ".tracetui" / "redaction.key").exists()
    assert len(s.notes) == 1 and f"(the recording was redacted with key {key_id})" in s.notes[0]
    assert s.redactor.key_id != key_id
    rec.header["redaction"] = "not a table"
    assert "the recording was redacted with key" not in HarnessSession("strict", "o.jsonl", recording=rec).notes[0]


def test_the_agent_name_is_the_given_one_else_the_recordings_else_the_programs() -> None:
    assert HarnessSession("record", "o.jsonl", agent="bot").spec.name == "bot"
    assert HarnessSession("record", "o.jsonl").spec.name == "app"
    rec = _recording()
    assert HarnessSession("strict", "o.jsonl", recording=rec).spec.name == "rec-agent"
    assert HarnessSession("strict", "o.jsonl", recording=rec, agent="bot").spec.name == "bot"
    rec.header["agent"] = 3
    assert HarnessSession("strict", "o.jsonl", recording=rec).spec.name == "app"


def test_the_agent_reference_is_the_given_one_else_the_recordings_else_the_name() -> None:
    assert HarnessSession("record", "o.jsonl", agent="bot", agent_ref="examples/app.py").spec.ref == "examples/app.py"
    assert HarnessSession("record", "o.jsonl", agent="bot").spec.ref == "bot"
    rec = _recording()
    assert HarnessSession("strict", "o.jsonl", recording=rec).spec.ref == "examples/rec.py"
    assert HarnessSession("record", "o.jsonl", code_version="abc123").spec.code_version == "abc123"


def test_a_recording_takes_its_clock_seed_and_input_from_the_arguments() -> None:
    s = HarnessSession("record", "o.jsonl", clock="2026-01-02T03:04:05+00:00", seed=11, input={"q": 2})
    assert s.now() == datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert s.seed == 11 and s.input == {"q": 2}


def test_a_replay_takes_the_recordings_seed_and_zero_when_it_is_not_a_number() -> None:
    assert HarnessSession("strict", "o.jsonl", recording=_recording()).seed == 7
    assert HarnessSession("strict", "o.jsonl", recording=_recording("r2.jsonl", seed="x")).seed == 0


# ----------------------------------------------------------------------------- ids, prompts


def test_ids_are_uuid4_shaped_with_the_prefix_and_the_same_sequence_for_the_same_seed() -> None:
    seqs = []
    for n in range(2):
        with record_session(f"r{n}.jsonl", seed=5) as s:
            ids = [s.new_id(), s.new_id("ord-")]
            s.output = "ok"
        seqs.append(ids)
    plain, prefixed = seqs[0]
    assert uuid.UUID(plain).version == 4 and str(uuid.UUID(plain)) == plain
    assert prefixed.startswith("ord-") and uuid.UUID(prefixed[4:]).version == 4
    assert seqs[0] == seqs[1]


def test_a_session_not_open_gives_no_ids() -> None:
    with pytest.raises(HarnessError, match="the tracetui session is not open"):
        HarnessSession("record", "o.jsonl").new_id()


def test_a_system_prompts_hash_is_16_hex_digits_and_the_header_hashes_the_distinct_prompts() -> None:
    s = HarnessSession("record", "o.jsonl")
    assert s.saw_system_prompt("be brief") == hashlib.sha256(b"be brief").hexdigest()[:16]
    hashes = []
    for n, prompts in enumerate((["a", "b"], ["a", "b", "a"], ["a", "c"])):
        with record_session(f"p{n}.jsonl") as s:
            for p in prompts:
                s.saw_system_prompt(p)
            s.output = "ok"
        hashes.append(_header(f"p{n}.jsonl")["prompt_hash"])
    assert hashes[0] == hashes[1] != hashes[2] and len(hashes[0]) == 16


# ----------------------------------------------------------------------------- the current session


def test_the_current_session_is_the_contexts_own_when_two_are_open() -> None:
    with record_session("a.jsonl") as a:
        assert current_session() is a
        other = contextvars.Context()

        def open_b() -> HarnessSession:
            b = record_session("b.jsonl").__enter__()
            assert current_session() is b
            return b

        b = other.run(open_b)
        assert current_session() is a  # two open: this context's own
        other.run(b.__exit__, None, None, None)
        a.output = "ok"
    assert current_session() is None


def test_an_error_leaving_an_async_block_is_the_runs_error() -> None:
    async def main() -> HarnessSession:
        s = record_session("e.jsonl")
        with pytest.raises(ValueError):
            async with s:
                raise ValueError("boom")
        return s

    s = asyncio.run(main())
    assert s.result is not None and isinstance(s.result.error, ValueError)


# ----------------------------------------------------------------------------- record_session / replay_session


def test_record_session_passes_every_argument_on(tmp_path: Path) -> None:
    key_file = tmp_path / "k.key"
    key_file.write_text("a-key-file-of-at-least-16-chars")
    Path("o.jsonl").write_text("old")
    s = record_session("o.jsonl", read_tools=["get_weather"], agent="bot", input={"q": 3},
                       clock="2026-01-02T03:04:05+00:00", timezone="Europe/Paris", seed=9, key_file=str(key_file),
                       overwrite=True, run_id="run-1", code_version="v9", agent_ref="examples/bot.py")
    assert s.mode == "record" and s.is_read("get_weather") and s.spec.name == "bot" and s.input == {"q": 3}
    assert s.now().isoformat().startswith("2026-01-02T04:04:05") and s.seed == 9 and s.run_id == "run-1"
    assert s.spec.code_version == "v9" and s.spec.ref == "examples/bot.py"
    assert s.redactor.key_id == Redactor(b"a-key-file-of-at-least-16-chars").key_id
    with s:
        s.output = "ok"  # overwrite: the old file is replaced
    assert _header("o.jsonl")["run_id"] == "run-1"


def test_replay_session_passes_every_argument_on(tmp_path: Path) -> None:
    _recording()
    key_file = tmp_path / "k.key"
    key_file.write_text("a-key-file-of-at-least-16-chars")
    Path("o.jsonl").write_text("old")
    s = replay_session("rec.jsonl", "o.jsonl", mode="loose", llm="live", read_tools=["extra"], allow_live=True,
                       key_file=str(key_file), overwrite=True, input={"q": 5}, run_id="replay-1",
                       accept_truncated=True)
    assert s.mode == "loose" and s.llm_mode == "live" and s.is_read("extra") and s.live_allowed("extra")
    assert s.input == {"q": 5} and s.run_id == "replay-1"
    assert s.redactor.key_id == Redactor(b"a-key-file-of-at-least-16-chars").key_id
    with s:
        s.output = "ok"
    header = _header("o.jsonl")
    assert header["accept_truncated"] is True and header["allow_live"] is True and header["llm_mode"] == "live"


def test_replay_session_defaults_frozen_strict_no_overwrite_and_no_truncated_responses() -> None:
    _recording()
    s = replay_session("rec.jsonl", "o.jsonl")
    assert s.mode == "strict" and s.llm_mode == "frozen" and s.input == {"q": 1} and s.run_id.startswith("replay-of-")
    with s:
        s.output = "ok"
    header = _header("o.jsonl")
    assert "accept_truncated" not in header and "allow_live" not in header
    with pytest.raises(HarnessError, match="exists"):
        with replay_session("rec.jsonl", "o.jsonl"):
            pass


def test_a_loose_replay_says_in_its_header_whether_it_may_go_live() -> None:
    _recording()
    with replay_session("rec.jsonl", "o.jsonl", mode="loose") as s:
        s.output = "ok"
    assert _header("o.jsonl")["allow_live"] is False


def test_a_recording_is_never_overwritten_unless_asked() -> None:
    Path("o.jsonl").write_text("old")
    with pytest.raises(HarnessError) as e:
        with HarnessSession("record", "o.jsonl"):
            pass
    assert str(e.value) == "o.jsonl exists; choose another name or pass overwrite=True"
    assert Path("o.jsonl").read_text() == "old"


# ----------------------------------------------------------------------------- ids of the run, the recorded input


def test_the_trace_and_run_ids_come_from_the_seed_the_mode_and_the_start_time() -> None:
    def ids(seed: int, mode: str = "record", at: int = 1_700_000_000_000_000_000) -> tuple[str, str]:
        s = HarnessSession(mode, "o.jsonl", seed=seed, timer=lambda: at)
        return s.trace_id, s.run_id

    first = ids(3)
    assert first == ids(3) and first != ids(4) and first != ids(3, at=1_700_000_000_000_000_001)
    for seed in range(8):
        trace_id, run_id = ids(seed)
        assert len(trace_id) == 32 and int(trace_id, 16) >= 0 and isinstance(run_id, str) and run_id


def test_a_replays_run_id_names_the_recorded_run_else_its_trace_else_run() -> None:
    rec = _recording()
    assert HarnessSession("strict", "o.jsonl", recording=rec).run_id == f"replay-of-{rec.header['run_id']}"
    rec.header.pop("run_id")
    assert HarnessSession("strict", "o.jsonl", recording=rec).run_id == f"replay-of-{rec.trace_id}"
    rec.trace_id = ""
    assert HarnessSession("strict", "o.jsonl", recording=rec).run_id == "replay-of-run"


def test_a_replay_of_a_recording_without_an_input_has_none() -> None:
    rec = _recording()
    rec.header.pop("input")
    for span in rec.spans:
        if span.parent_id is None:
            span.data.pop("input", None)
    assert HarnessSession("strict", "o.jsonl", recording=rec).input is None


def test_a_replay_session_built_directly_serves_no_truncated_responses_unless_asked() -> None:
    rec = _recording()
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        s.output = "ok"
    assert "accept_truncated" not in _header("o.jsonl")


@pytest.mark.parametrize("argv", [["-c"], [""], []])
def test_a_program_without_a_file_name_records_as_agent(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", argv)  # python -c, an interactive interpreter, an embedded one
    assert HarnessSession("record", "o.jsonl").spec.name == "agent"


def test_a_recording_blocks_nothing_and_its_result_says_so() -> None:
    with record_session("o.jsonl") as s:
        s.output = "ok"
    assert s.result is not None and s.result.blocked == [] and s.result.error is None


def test_a_divergence_raised_out_of_a_replay_block_is_the_runs_divergence() -> None:
    from tracetui.core.errors import ReplayDivergence

    rec = _recording()
    s = HarnessSession("strict", "o.jsonl", recording=rec)
    with pytest.raises(ReplayDivergence):
        with s:
            raise ReplayDivergence("left the recording here", span_id="abc")
    assert s.result is not None and s.result.outcome.divergences == [
        {"type": "divergence", "span_id": "abc", "seq": None, "tool": None, "message": "left the recording here"}]


def test_the_result_names_the_file_the_run_and_the_output() -> None:
    with record_session("o.jsonl", run_id="run-9") as s:
        s.output = {"answer": 42}
    assert s.result is not None
    assert (s.result.path, s.result.run_id, s.result.output) == ("o.jsonl", "run-9", {"answer": 42})


def test_a_faithful_replay_reproduces_and_consumes_every_read_and_an_idle_one_does_neither() -> None:
    rec = _recording()
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        s.output = get_order("A1")
    assert s.result is not None and s.result.reproduces is True and s.result.unconsumed == []
    with HarnessSession("strict", "o2.jsonl", recording=rec) as idle:
        idle.output = "ok"
    assert idle.result is not None and idle.result.reproduces is False
    assert [u.get("tool") for u in idle.result.unconsumed] == ["get_order"]


# ----------------------------------------------------------------------------- the header


def test_a_recordings_header_names_the_session_its_reads_and_each_tools_schema_hash() -> None:
    _recording()
    header = _header("rec.jsonl")
    assert header["record_mode"] == "record" and header["recorder"] == "tracetui.session"
    assert "llm_mode" not in header and "replay_of" not in header and "network_isolation" not in header
    assert header["read_tools"] == ["get_order"] and list(header["tool_schemas"]) == ["get_order"]
    for digest in (header["tool_schema_hash"], header["tool_schemas"]["get_order"]):
        assert len(digest) == 16 and int(digest, 16) >= 0
    assert header["agent"] == "rec-agent" and header["agent_ref"] == "examples/rec.py"


def test_a_replays_header_names_what_it_replays_how_and_behind_what() -> None:
    rec = _recording()
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        s.hinted_read("zeta", "mcp")
        s.hinted_read("alpha", "mcp")
        s.output = get_order("A1")
    header = _header("o.jsonl")
    assert header["record_mode"] == "strict" and header["llm_mode"] == "frozen"
    assert header["replay_of"] == {"run_id": rec.header["run_id"], "trace_id": rec.trace_id, "path": "rec.jsonl",
                                   "format": rec.format}
    assert header["network_isolation"] == ISOLATION_GUARD and header["recorder"] == "tracetui.session"
    assert header["hinted_read_tools"] == ["alpha", "zeta"] and "allow_live" not in header


def test_a_session_is_entered_once_never_nested_and_never_writes_over_its_recording() -> None:
    s = record_session("a.jsonl")
    with s:
        with pytest.raises(HarnessError) as e:
            with record_session("b.jsonl"):
                pass
        assert str(e.value) == "a tracetui session is already open in this context; sessions do not nest"
        s.output = "ok"
    with pytest.raises(HarnessError) as e:
        s.__enter__()
    assert str(e.value) == "a tracetui session is entered once"
    rec = _recording()
    with pytest.raises(HarnessError) as e:
        HarnessSession("strict", "rec.jsonl", recording=rec, overwrite=True).__enter__()
    assert str(e.value) == "out=rec.jsonl is the recording being replayed; write the replay to another file"


def test_a_recording_leaves_the_network_open_and_writes_its_normalisation_and_redaction_record() -> None:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        with record_session("o.jsonl") as s:
            socket.create_connection(server.getsockname(), timeout=5).close()  # live: nothing blocks a recording
            s.output = "ok"
    finally:
        server.close()
    assert s.result is not None and s.result.blocked == []
    header = _header("o.jsonl")
    assert header["normalization"] and header["redaction"]["key_id"] == s.redactor.key_id
    assert header["redaction"]["rules"] == list(s.redactor.rules)


def test_outside_its_block_a_session_says_how_to_use_it() -> None:
    s = HarnessSession("record", "o.jsonl")
    with pytest.raises(HarnessError) as e:
        _ = s.random
    assert str(e.value) == "the tracetui session is not open: use it inside its with block"


def test_after_its_block_a_session_is_closed_again() -> None:
    with record_session("o.jsonl") as s:
        s.output = "ok"
    with pytest.raises(HarnessError, match="the tracetui session is not open"):
        s.new_id()


def test_a_replay_says_whether_the_recorded_run_failed() -> None:
    rec = _recording()
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        s.output = get_order("A1")
    assert s.result is not None and s.result.original_failed is False
    with pytest.raises(ValueError):
        with record_session("bad.jsonl"):
            raise ValueError("the agent failed")
    with HarnessSession("strict", "o2.jsonl", recording=read_trace("bad.jsonl")) as again:
        again.output = "ok"
    assert again.result is not None and again.result.original_failed is True


def test_the_tool_schema_hash_changes_with_the_tools_the_run_called() -> None:
    with record_session("none.jsonl") as s:
        s.output = "ok"
    _recording()
    assert _header("none.jsonl")["tool_schema_hash"] != _header("rec.jsonl")["tool_schema_hash"]
