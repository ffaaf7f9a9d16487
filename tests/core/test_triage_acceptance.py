"""Acceptance of guided triage (issue 5) as a new user runs it, from the CLI and the TUI.

The pairs are our own: a held-out stock agent (tests/data/triage_acceptance/stock_agent.py, written only
against docs/harness.md) recorded and replayed with ``tracetui record``/``replay``, plus hand-edited
tracetui/1 and OTLP files. Each "Done when" kind gets its verdict and its evidence span ids checked against
the spans that matter; then the commands are fed what a new user would feed them by mistake.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from corpus import CORPUS, corpus
from tracetui.cli.main import main
from tracetui.core.triage.batch import batch
from tracetui.core.diff import diff_traces
from tracetui.core.diff.labels import Label, divergence_key, now_iso, save_label
from tracetui.core.readers import read_runs, read_trace

KEY = "acceptance-key-0123456789abcdefg"  # 32 characters (TRACETUI_REDACTION_KEY)
AGENT = str(Path(__file__).resolve().parents[1] / "data" / "triage_acceptance" / "stock_agent.py")
RECORD = ["--input", '{"sku":"BK-700"}', "--clock", "2026-03-02T09:00:00+00:00", "--seed", "1"]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main([str(a) for a in argv], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return rc, out.getvalue(), err.getvalue()


def triage_json(*argv: str) -> dict:
    rc, out, err = cli("triage", *argv, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


def spans(path: Path) -> list[dict]:
    """The span lines of a tracetui/1 file, in seq order."""
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return sorted(lines, key=lambda s: s["seq"])


def span_of(path: Path, kind: str, name: str = "", nth: int = 0) -> str:
    return [s["span_id"] for s in spans(path) if s["kind"] == kind and name in s["name"]][nth]


@pytest.fixture(autouse=True)
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Every pair, recorded once: {name: path} (paths absolute)."""
    d = tmp_path_factory.mktemp("acceptance")
    mp = pytest.MonkeyPatch()
    mp.setenv("TRACETUI_REDACTION_KEY", KEY)
    mp.chdir(d)
    try:
        def record(fn: str, out: str, on_hand: int, backorder: int) -> None:
            (d / "warehouse.json").write_text(json.dumps({"on_hand": on_hand, "backorder": backorder}))
            assert cli("record", f"{AGENT}:{fn}", *RECORD, "--out", out)[0] == 0

        record("run", "bad.jsonl", 3, 3)  # all 3 on backorder, v2 quotes it anyway
        assert cli("replay", "bad.jsonl", f"{AGENT}:run_v3", "--llm", "live", "--out", "v3.jsonl")[0] == 0
        record("run", "stale.jsonl", 0, 0)  # the stock index answered 0 mid-rebuild
        (d / "seed.json").write_text(json.dumps({"stock": {"BK-700": {"on_hand": 4, "backorder": 0}}}))
        rc, _, err = cli("replay", "stale.jsonl", f"{AGENT}:run", "--mode", "fixture", "--seed-file", "seed.json",
                         "--llm", "live", "--out", "stale.replay.jsonl")
        assert rc == 0, err
        record("run_unversioned", "nov.jsonl", 3, 3)
        (d / "warehouse.json").write_text(json.dumps({"on_hand": 3, "backorder": 3}))
        doc = triage_json("bad.jsonl", "--agent", f"{AGENT}:run", "--trials", "3", "--replay-out", "k3.jsonl")
        # truncated: the get_stock output as a 1,024-character exporter preview cut mid-JSON
        lines = (d / "bad.jsonl").read_text().splitlines()
        body = json.dumps({"sku": "BK-700", "bins": [{"id": f"B{i:03d}", "qty": 1} for i in range(80)]})
        for i, line in enumerate(lines[1:], 1):
            s = json.loads(line)
            if s["kind"] == "tool" and s["tool"]["tool_name"] == "get_stock":
                s["tool"]["output"] = body[:1024]
                lines[i] = json.dumps(s)
        (d / "cut.jsonl").write_text("\n".join(lines) + "\n")
        paths = {p.name: p for p in d.iterdir()}
        yield {**paths, "agent_trials": doc}
    finally:
        mp.undo()


# ------------------------------------------------------------------ step 1..3 on each kind of pair
def test_truncated_tool_output_in_tracetui1_is_not_replayable(runs) -> None:  # type: ignore[no-untyped-def]
    cut = runs["cut.jsonl"]
    doc = triage_json(cut, runs["v3.jsonl"])  # a replay given: step 1 still wins
    stock = span_of(cut, "tool", "get_stock")
    assert doc["verdict"] == "not_replayable"
    assert [(e["span_id"], e["side"]) for e in doc["evidence"]] == [(stock, "original")]
    (finding,) = doc["replayability"]["findings"]
    assert (finding["code"], finding["field"], finding["span_id"]) == ("truncated_output", "tool.output", stock)
    assert "1,024" in finding["reason"] and doc["replayability"]["spans"] == {stock: "not_replayable"}


def test_otel_export_with_a_cut_attribute_is_not_replayable(tmp_path: Path) -> None:
    from otlp_helpers import to_attributes

    body = json.dumps({"sku": "BK-700", "bins": [{"id": f"B{i:03d}", "qty": 1} for i in range(80)]})

    def span(sid: str, parent: str, name: str, attrs: dict, t: int) -> dict:
        return {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": sid, "parentSpanId": parent, "name": name,
                "kind": 1, "startTimeUnixNano": str(1_700_000_000_000_000_000 + t),
                "endTimeUnixNano": str(1_700_000_000_000_001_000 + t), "attributes": to_attributes(attrs)}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_stock", "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": '{"sku":"BK-700"}', "gen_ai.tool.call.result": body[:1024]}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("eee19b7ec3c1b174", "", "invoke_agent shop", {"gen_ai.operation.name": "invoke_agent"}, 0),
        span("aaa19b7ec3c1b171", "eee19b7ec3c1b174", "execute_tool get_stock", tool, 10)]}]}]}
    (tmp_path / "cut.otlp.json").write_text(json.dumps(doc))
    out = triage_json("cut.otlp.json")
    assert out["verdict"] == "not_replayable"
    assert [e["span_id"] for e in out["evidence"]] == ["aaa19b7ec3c1b171"]
    assert {(f["code"], f["span_id"]) for f in out["replayability"]["findings"] if f["severity"] == "not_replayable"} \
        == {("truncated_output", "aaa19b7ec3c1b171")}


def test_missing_prompt_version_is_a_caveat(runs) -> None:  # type: ignore[no-untyped-def]
    """No prompt version: a caveat (the system prompt's hash stands for it); triage waits for a replay."""
    nov = runs["nov.jsonl"]
    doc = triage_json(nov)
    llm = [s["span_id"] for s in spans(nov) if s["kind"] == "llm"]
    assert doc["verdict"] is None and doc["reproduction"] is None and doc["steps"][0]["state"] == "passed"
    (finding,) = doc["replayability"]["findings"]
    assert (finding["code"], finding["field"], finding["grade"]) == ("missing_field", "llm.prompt_version", "caveat")
    assert "system prompt's hash" in finding["workaround"]
    assert doc["replayability"]["spans"] == dict.fromkeys(llm, "partial")


def test_failure_that_comes_back_with_recorded_tools(runs) -> None:  # type: ignore[no-untyped-def]
    """--agent --trials 3: the scripted model quotes backordered stock every time: model_or_prompt, 3 of 3."""
    doc, bad = runs["agent_trials"], runs["bad.jsonl"]
    final = span_of(bad, "llm", nth=-1)
    assert doc["verdict"] == "model_or_prompt"
    assert (doc["reproduction"]["trials"], doc["reproduction"]["reproduced"]) == (3, 3)
    assert doc["failure"]["span_id"] == final and "in stock" in doc["failure"]["reason"]
    ids = [e["span_id"] for e in doc["evidence"]]
    assert ids[0] == final and span_of(bad, "tool", "get_price") in ids
    assert len(read_runs(str(runs["k3.jsonl"])).runs) == 3  # --replay-out kept the K trials


def test_failure_that_does_not_come_back_because_the_read_was_stale(runs) -> None:  # type: ignore[no-untyped-def]
    orig, rep = runs["stale.jsonl"], runs["stale.replay.jsonl"]
    doc = triage_json(orig, rep)
    assert doc["verdict"] == "data_or_integration"
    assert (doc["reproduction"]["trials"], doc["reproduction"]["reproduced"]) == (1, 0)
    assert [(e["span_id"], e["side"]) for e in doc["evidence"]] == \
        [(span_of(orig, "tool", "get_stock"), "original"), (span_of(rep, "tool", "get_stock"), "replay")]
    assert "tool.output.on_hand" in doc["evidence"][0]["reason"]


def test_prompt_version_change(runs) -> None:  # type: ignore[no-untyped-def]
    orig, rep = runs["bad.jsonl"], runs["v3.jsonl"]
    doc = triage_json(orig, rep)
    assert doc["verdict"] == "code_or_config_change"
    ev = [(e["span_id"], e["side"]) for e in doc["evidence"]]
    assert ev[:2] == [(span_of(orig, "llm"), "original"), (span_of(rep, "llm"), "replay")]
    assert "llm.prompt_version" in doc["evidence"][0]["reason"]
    assert any(e["span_id"] is None and "prompt_versions.shop.system" in e["reason"] for e in doc["evidence"])


def test_k_trial_replay_file_and_file_hash_run(runs) -> None:  # type: ignore[no-untyped-def]
    bad, k3 = runs["bad.jsonl"], runs["k3.jsonl"]
    assert triage_json(bad, k3)["reproduction"]["trials"] == 3
    second = read_runs(str(k3)).runs[1].trace_id
    doc = triage_json(bad, f"{k3}#{second}")
    assert (doc["reproduction"]["trials"], doc["reproduction"]["reproduced"]) == (1, 1)
    rc, _, err = cli("triage", bad, f"{k3}#no-such-run")
    assert rc == 2 and "no-such-run" in err


def test_failing_span(runs) -> None:  # type: ignore[no-untyped-def]
    orig, rep = runs["stale.jsonl"], runs["stale.replay.jsonl"]
    first, last = span_of(orig, "llm"), span_of(orig, "llm", nth=-1)
    early = triage_json(orig, rep, "--failing-span", first)  # the trajectory agrees up to the first llm call
    assert early["failure"]["span_id"] == first and early["reproduction"]["reproduced"] == 1
    assert triage_json(orig, rep, "--failing-span", last)["failure"]["span_id"] == last
    replay_only = span_of(rep, "tool", "get_price")  # a span only the replay has
    rc, out, err = cli("triage", orig, rep, "--failing-span", replay_only)
    assert rc == 2 and out == "" and replay_only in err and "ORIGINAL" in err


def test_failing_span_on_the_bad_claim_of_the_stale_pair(runs) -> None:  # type: ignore[no-untyped-def]
    orig, rep = runs["stale.jsonl"], runs["stale.replay.jsonl"]
    late = triage_json(orig, rep, "--failing-span", span_of(orig, "llm", nth=-1))
    assert late["reproduction"]["reproduced"] == 0 and late["verdict"] == "data_or_integration"


def test_labels_show_in_diff_and_triage(runs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    orig, rep = shutil.copy(runs["bad.jsonl"], tmp_path), shutil.copy(runs["v3.jsonl"], tmp_path)
    d = diff_traces(read_trace(orig), read_trace(rep)).divergences[0]
    key = divergence_key(d)
    save_label(rep, Label(key, "acceptable_alternative", "v3 is the fix", now_iso(), d.type.value,
                          d.original and d.original.span_id, d.replay and d.replay.span_id))
    assert Path(orig).read_bytes() == runs["bad.jsonl"].read_bytes()  # the original is never written
    rc, out, _ = cli("diff", orig, rep, "--format", "json")
    assert rc == 1 and json.loads(out)["first_divergence"]["label"]["label"] == "acceptable_alternative"
    rc, out, _ = cli("diff", orig, rep)
    assert 'acceptable_alternative: "v3 is the fix"' in out
    doc = triage_json(orig, rep)
    assert doc["reproduction"]["per_trial"][0]["labels"][0]["label"] == "acceptable_alternative"
    rc, out, _ = cli("triage", orig, rep)
    assert rc == 0 and "acceptable_alternative" in out and "v3 is the fix" in out
    Path(rep + ".labels.json").write_text('{"schema": "tracetui-labels/1", "labels": [{"key": 3}]}')
    for cmd in ("diff", "triage"):
        rc, out, err = cli(cmd, orig, rep)
        assert rc in (0, 1) and "labels.json" in err and "acceptable_alternative" not in out


# ------------------------------------------------------------------ batch
def test_batch_on_21_pairs(runs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    kinds = {"stale": ("stale.jsonl", "stale.replay.jsonl", 9), "prompt": ("bad.jsonl", "v3.jsonl", 7),
             "same": ("bad.jsonl", "bad.jsonl", 4)}
    for kind, (o, r, n) in kinds.items():
        for i in range(n):
            if i % 2:  # both layouts: CASE/original + CASE/replay, NAME.original + NAME.replay
                (tmp_path / "cases" / f"{kind}-{i}").mkdir(parents=True)
                shutil.copy(runs[o], tmp_path / "cases" / f"{kind}-{i}" / "original.jsonl")
                shutil.copy(runs[r], tmp_path / "cases" / f"{kind}-{i}" / "replay.jsonl")
            else:
                (tmp_path / "cases" / "flat").mkdir(parents=True, exist_ok=True)
                shutil.copy(runs[o], tmp_path / "cases" / "flat" / f"{kind}-{i}.original.jsonl")
                shutil.copy(runs[r], tmp_path / "cases" / "flat" / f"{kind}-{i}.replay.jsonl")
    (tmp_path / "cases" / "broken").mkdir()
    shutil.copy(runs["bad.jsonl"], tmp_path / "cases" / "broken" / "original.jsonl")
    (tmp_path / "cases" / "broken" / "replay.jsonl").write_text("{\"schema\": \"tracetui/1\"\nnot json\n")
    rc, out, err = cli("triage", "--batch", "cases", "--format", "json")
    doc = json.loads(out)
    assert rc == 1 and doc["cases"] == 21
    assert [(g["count"], g["signature"]["type"], g["signature"]["kind"]) for g in doc["groups"]] == \
        [(9, "output_mismatch", "tool"), (7, "input_mismatch", "llm")]
    assert doc["groups"][0]["signature"]["fields"] == ["tool.output.on_hand"]
    assert {c["verdict"] for c in doc["groups"][0]["cases"]} == {"data_or_integration"}
    assert {c["verdict"] for c in doc["groups"][1]["cases"]} == {"code_or_config_change"}
    assert len(doc["no_divergence"]) == 4
    assert [e["name"] for e in doc["errors"]] == ["broken"] and "replay.jsonl" in doc["errors"][0]["message"]
    rc, text, _ = cli("triage", "--batch", "cases")
    assert rc == 1 and text.index("9 ×") < text.index("7 ×") and "broken" in text
    seen: list[tuple[int, int]] = []
    report = batch("cases", progress=lambda done, total: seen.append((done, total)))
    assert [g.count for g in report.groups] == [9, 7]
    assert seen and seen[-1] == (21, 21) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_batch_on_an_empty_folder_or_a_file(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "a.jsonl").write_text("")
    for target, words in (("empty", "no original/replay pairs"), ("a.jsonl", "is a file"), ("nope", "no such")):
        rc, out, err = cli("triage", "--batch", target)
        assert rc == 2 and out == "" and words in err


# ------------------------------------------------------------------ trying to break it
CORPUS_FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*")
                      if p.is_file() and p.suffix != ".md") if CORPUS.exists() else ["absent"]


@pytest.mark.parametrize("rel", CORPUS_FILES)
def test_corpus_file_never_tracebacks(rel: str) -> None:
    path = corpus(rel)
    for argv in ((path,), (path, path), (path, "--format", "json")):
        rc, out, err = cli("triage", *argv)
        assert rc in (0, 2) and (out if rc == 0 else err.startswith("tracetui: error:"))
        if rc == 0 and "--format" in argv:
            assert json.loads(out)["replayability"]["verdict"] in ("replayable", "partial", "not_replayable")


def test_empty_files(runs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty.jsonl").write_text("")
    for argv in (("empty.jsonl",), (runs["stale.jsonl"], "empty.jsonl")):
        rc, out, err = cli("triage", *argv)
        assert rc == 2 and out == "" and "empty.jsonl" in err and "empty" in err


def test_original_with_no_spans_is_not_replayable(runs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "h.jsonl").write_text(runs["stale.jsonl"].read_text().splitlines()[0] + "\n")
    assert triage_json("h.jsonl")["replayability"]["verdict"] == "not_replayable"


def test_replay_with_no_spans_gives_no_data_verdict(runs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "h.jsonl").write_text(runs["stale.replay.jsonl"].read_text().splitlines()[0] + "\n")
    rc, out, err = cli("triage", runs["stale.jsonl"], "h.jsonl", "--format", "json")
    assert rc == 2 or json.loads(out)["verdict"] != "data_or_integration" or "no span" in err


def test_replay_of_another_run(runs) -> None:  # type: ignore[no-untyped-def]
    other = Path(__file__).resolve().parents[2] / "sample_runs" / "scheduling" / "original.jsonl"
    rc, out, err = cli("triage", runs["stale.jsonl"], other, "--format", "json")
    assert rc == 2 or json.loads(out)["verdict"] != "data_or_integration" or "input" in err


# ------------------------------------------------------------------ the TUI
async def _panel(pilot):  # type: ignore[no-untyped-def]
    from tests.tui.helpers import rendered
    from tracetui.tui.screens.triage_screen import TriageList, TriageScreen

    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("t")
    for _ in range(100):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if isinstance(pilot.app.screen, TriageScreen) and pilot.app.screen.result is not None:
            break
    screen = pilot.app.screen
    assert isinstance(screen, TriageScreen) and screen.result is not None
    text = "\n".join(rendered(o.prompt, 120) for o in screen.query_one(TriageList).options)
    return screen.result, text


async def test_tui_triage_caveat_and_no_divergence(runs) -> None:  # type: ignore[no-untyped-def]
    from tracetui.tui import TraceTuiApp

    app = TraceTuiApp(str(runs["nov.jsonl"]), str(runs["nov.jsonl"]))
    async with app.run_test(size=(120, 36)) as pilot:
        result, text = await _panel(pilot)
        assert result.verdict == "model_or_prompt" and result.steps[0].state == "passed"
        assert result.confidence == "low" and "llm.prompt_version" in text and "workaround" in text
        await pilot.press("escape")
    app = TraceTuiApp(str(runs["bad.jsonl"]), str(runs["bad.jsonl"]))
    async with app.run_test(size=(120, 36)) as pilot:
        result, text = await _panel(pilot)
        assert result.verdict == "model_or_prompt" and "1 of 1" in text
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("l")  # no divergence anywhere: a notice, no dialog
        await pilot.pause()
        assert type(app.screen).__name__ != "LabelDialog"
        assert any("No divergence" in str(n.message) for n in app._notifications)


async def test_tui_label_key_on_a_damaged_sidecar(runs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tracetui.tui import TraceTuiApp

    orig, rep = shutil.copy(runs["bad.jsonl"], tmp_path), shutil.copy(runs["v3.jsonl"], tmp_path)
    Path(rep + ".labels.json").write_text("[1, 2")
    app = TraceTuiApp(orig, rep)
    async with app.run_test(size=(120, 36)) as pilot:
        result, _ = await _panel(pilot)
        assert result.verdict == "code_or_config_change"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("n", "l")
        await pilot.pause()
        assert type(app.screen).__name__ != "LabelDialog"
        assert any("labels" in str(n.message) for n in app._notifications)
    assert Path(rep + ".labels.json").read_text() == "[1, 2"
