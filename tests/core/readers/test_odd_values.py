"""Values of the wrong type or beyond what orjson writes end in a warning naming file and JSON path, never
an internal error (issue 21): an integer beyond 64 bits or a lone surrogate in `diff --format json` and
`show --format json`, an OpenAI Agents span_data.type that is not a string, and the same families found
by running each reader on type-swapped values (tests/fuzzing.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.corpus import corpus
from tracetui.cli.main import main
from tracetui.core.readers import read_runs, read_trace

SAMPLES = Path(__file__).resolve().parents[3] / "sample_runs"
ORIGINAL = SAMPLES / "scheduling" / "original.jsonl"
REPLAY = SAMPLES / "scheduling" / "replay.jsonl"


def _replay_with(tmp_path: Path, insert: str) -> Path:
    lines = REPLAY.read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if '"arguments":{' in line)
    lines[i] = lines[i].replace('"arguments":{', '"arguments":{' + insert + ",", 1)
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_an_integer_beyond_64_bits_is_written_exact_in_diff_json(tmp_path):
    replay = _replay_with(tmp_path, '"n":123456789012345678901234567890')
    code, out, err = _cli("diff", str(ORIGINAL), str(replay), "--format", "json")
    assert code == 1 and "internal error" not in err
    report = json.loads(out)
    assert "123456789012345678901234567890" in out and report["first_divergence"] is not None
    noted = [s for s in report["replay"]["skipped"] if "beyond 64 bits" in s]
    assert noted and "(" in noted[0] and ".arguments.n)" in noted[0]  # file, line and JSON path
    code, out, err = _cli("show", str(replay), "--format", "json")
    assert code == 0 and "123456789012345678901234567890" in out


def test_a_lone_surrogate_is_a_warning_with_its_path_and_written_as_the_escape(tmp_path):
    replay = _replay_with(tmp_path, '"s":"a\\ud800b"')
    t = read_trace(str(replay))
    (issue,) = [i for i in t.issues if "lone surrogate" in i.message]
    assert issue.severity == "warning" and issue.where.endswith(".arguments.s") and issue.line is not None
    code, out, err = _cli("diff", str(ORIGINAL), str(replay), "--format", "json")
    assert code == 1 and "internal error" not in err
    assert "a\\ud800b" in out and json.loads(out)["first_divergence"] is not None
    out.encode("utf-8")  # printable as UTF-8: no raw surrogate left
    code, out, err = _cli("show", str(replay), "--format", "json")
    assert code == 0 and "lone surrogate" in out


@pytest.mark.parametrize("odd", [["agent"], {"a": 1}, 7])
def test_an_openai_agents_span_data_type_that_is_not_a_string(tmp_path, odd):
    src = corpus("openai-agents/recipe_agents_hierarchy.ingest.jsonl")
    lines = src.read_text().splitlines()
    first = json.loads(lines[0])
    first["data"][0]["span_data"]["type"] = odd
    path = tmp_path / "agents.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    tf = read_runs(str(path))
    (issue,) = [i for i in tf.issues if i.where == "$.data[0].span_data.type"]
    assert issue.severity == "warning" and "not a string" in issue.message and issue.line == 1
    assert _cli("diff", str(src), str(path))[0] in (0, 1)


def test_a_swe_agent_execution_time_of_1e308_seconds_has_no_duration(tmp_path):
    src = corpus("swe-agent/marshmallow-1867__function_calling.traj")
    doc = json.loads(src.read_text())
    doc["trajectory"][0]["execution_time"] = 1e308
    path = tmp_path / "t.traj"
    path.write_text(json.dumps(doc))
    assert read_trace(str(path)).spans


@pytest.mark.parametrize(("rel", "keys"), [
    ("langfuse/pydantic-ai-tools-2025-12-04.trace.json", ("observations", 1, "input")),
    ("atif/harbor_openhands.json", ("steps", 0, "message")),
    ("atif/multi_tool_trajectory.json", ("steps", 1, "metrics")),
])
def test_integers_beyond_64_bits_where_a_reader_writes_json_text(tmp_path, rel, keys):
    src = corpus(rel)
    doc = json.loads(src.read_text())
    node = doc
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = {"big": 2**70, "s": "x\ud800y"}
    path = tmp_path / src.name
    path.write_text(json.dumps(doc))
    code, out, err = _cli("show", str(path), "--format", "json")
    assert code == 0 and "internal error" not in err, err


def test_a_replay_summary_of_odd_shapes_is_shown_as_text(tmp_path):
    lines = REPLAY.read_text().splitlines()
    spans = [json.loads(line) for line in lines[1:]]
    root = next(s for s in spans if s["parent_id"] is None)
    assert "replay.summary" in root.get("attributes", {})
    root["attributes"]["replay.summary"]["divergences"] = ["a\ud800b", {"type": {}}, 3]
    root["attributes"]["replay.summary"]["writes"] = "many"
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join([lines[0], *(json.dumps(s) for s in spans)]) + "\n")
    for fmt in ("text", "json"):
        code, out, err = _cli("show", str(path), "--format", fmt)
        assert code == 0 and "internal error" not in err, err


@pytest.mark.parametrize("value", ["9" * 5000, "1e100000000", str(2**64), "-1"])
def test_a_time_beyond_64_bits_is_no_time(tmp_path, value):
    lines = REPLAY.read_text().splitlines()
    lines[2] = lines[2].replace('"start_ns":', f'"start_ns":{value},"was_start_ns":', 1)
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(lines) + "\n")
    t = read_trace(str(path))
    (issue,) = [i for i in t.issues if i.where == "start_ns"]
    assert "is not integer nanoseconds; ignored" in issue.message and len(issue.message) < 120
    for argv in (["show", str(path)], ["show", str(path), "--format", "json"], ["diff", str(REPLAY), str(path)],
                 ["convert", str(path), str(tmp_path / "out.jsonl"), "--force"]):
        code, out, err = _cli(*argv)
        assert code in (0, 1) and "internal error" not in err, (argv, err)


@pytest.mark.parametrize("rel", ["any-agent-trace/OPENAI_trace.json", "otlp-json/opentelemetry-proto_examples_trace.json",
                                 "atif/multi_tool_trajectory.json", "langfuse/koog-2025-08-26.trace.json"])
def test_a_5000_digit_number_in_any_string_is_read_as_text(tmp_path, rel):
    """The family of "an int() of text Python refuses" (a status code, a span kind, a time, an attribute
    key's index, a format version written as 5,000 digits): each string of the file in turn (150 at most,
    seeded) replaced; every read ends in spans or a ReadError, never another exception."""
    import random

    from tests.fuzzing import _paths, _set
    from tracetui.core.errors import ReadError

    src = corpus(rel)
    doc = json.loads(src.read_text())
    strings = [p for p in _paths(doc) if p and isinstance(_get(doc, p), str)]
    picked = random.Random(21).sample(strings, min(150, len(strings)))
    path = tmp_path / src.name
    for where in picked:
        for odd in ("9" * 5000, "ATIF-v1." + "7" * 5000, "attr." + "3" * 5000):
            path.write_text(json.dumps(_set(json.loads(src.read_text()), where, odd)))
            try:
                read_runs(str(path))
            except ReadError:
                pass


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc
