"""Fields two trace formats record differently are not compared, and said (``diff.comparable``, issue 18).

The bundled order_lookup pair exists as tracetui/1 and as OTLP exports of the same two runs: the OTLP
files hold no prompt id/version, no tool effect/version, no clock, and the run's input as the user's
message where tracetui keeps the agent's own value. Diffed across formats, the pair must show the
divergences the same-format pair shows — nothing more — and count what it could not compare.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tracetui.cli.main import main
from tracetui.core.diff import diff_traces
from tracetui.core.diff.comparable import TOKEN_RE, fit_shapes
from tracetui.core.readers import read_trace

PAIR = Path(__file__).resolve().parents[2] / "sample_runs" / "order_lookup"


def _rows(diff) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(d.row, d.type.value, tuple(f.path for f in d.fields)) for d in diff.divergences]


@pytest.mark.parametrize("original,replay", [("original.otlp.json", "replay.jsonl"),
                                             ("original.jsonl", "replay.otlp.json")])
def test_a_cross_format_pair_shows_what_the_same_format_pair_shows(original, replay):
    native = diff_traces(read_trace(PAIR / "original.jsonl"), read_trace(PAIR / "replay.jsonl"))
    assert native.not_comparable == ()  # one format: every field compared
    mixed = diff_traces(read_trace(PAIR / original), read_trace(PAIR / replay))
    assert [(r, t) for r, t, _ in _rows(mixed)] == [(r, t) for r, t, _ in _rows(native)]
    assert mixed.first.fields[0].path == "llm.output.tool_calls[0].arguments.customer_id"
    said = {u.path: u for u in mixed.not_comparable}
    assert said["llm.prompt_version"].pairs == 2 and said["llm.prompt_version"].reason == "not recorded by otlp-json"
    assert {"tool.effect", "tool.tool_version", "agent.input"} <= set(said)
    assert "compared on the user's text" in said["agent.input"].reason


def test_the_report_counts_what_it_did_not_compare_and_names_no_input_change():
    out = io.StringIO()
    code = main(["diff", str(PAIR / "original.otlp.json"), str(PAIR / "replay.jsonl"), "--format", "json"],
                stdout=out, stderr=io.StringIO())
    report = json.loads(out.getvalue())
    assert code == 1 and report["first_divergence"]["row"] == 1
    nc = report["not_comparable"]
    assert nc["fields"] == sum(i["pairs"] for i in nc["items"]) >= 10
    assert {"header.clock", "header.input", "llm.prompt_id"} <= {i["path"] for i in nc["items"]}
    # the same input in two shapes is neither a run change nor "not a replay"
    assert report["run_changes"] == [] and report["not_a_replay"] is None
    out = io.StringIO()
    main(["diff", str(PAIR / "original.otlp.json"), str(PAIR / "replay.jsonl")], stdout=out, stderr=io.StringIO())
    assert f"{nc['fields']} fields not comparable (the two formats record them differently):" in out.getvalue()
    assert "  llm.prompt_id (2): not recorded by otlp-json" in out.getvalue()


def test_the_same_input_in_two_shapes_fits_and_another_input_does_not():
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is #5531?"}]
    assert fit_shapes(msgs, "Where is #5531?", "user") == ("Where is #5531?", "Where is #5531?")
    assert fit_shapes({"message": "Where is #5531?", "customer_id": "C-1"}, msgs, "user") == \
        ("Where is #5531?", "Where is #5531?")
    assert fit_shapes(msgs, "Where is #5529?", "user") == ("Where is #5531?", "Where is #5529?")  # still differs
    assert fit_shapes({"message": "Where is #5529?"}, msgs, "user") is None  # compared as recorded
    assert fit_shapes("a", "b", "user") is None  # one shape: nothing to fit


def test_the_token_pattern_is_the_redactors():
    from tracetui.core.harness.redact import TOKEN_RE as HARNESS_TOKEN_RE

    assert TOKEN_RE.pattern == HARNESS_TOKEN_RE.pattern
