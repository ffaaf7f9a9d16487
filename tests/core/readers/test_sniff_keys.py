"""A value over 64 KiB coming first no longer hides a file's format (issue 21): the second sniff reads on
and looks at the keys (``readers.sniff_keys``). Every format of the corpus and the sample runs, with a
100 KB string as the first key of its document (or of its first line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.corpus import CORPUS
from tracetui.core.errors import FormatNotRecognised
from tracetui.core.readers import read_runs
from tracetui.core.readers.sniff_keys import key_skeleton, line_skeleton

SAMPLES = Path(__file__).resolve().parents[3] / "sample_runs"
PAD = "p" * 100_000


def _files() -> list[Path]:
    files = [SAMPLES / "scheduling" / "original.jsonl", SAMPLES / "order_lookup" / "original.otlp.json",
             *sorted((SAMPLES / "foreign").glob("*.json"))]
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix not in (".md", ".eval"))
    return files


def _padded(src: Path) -> bytes:
    data = src.read_bytes()
    if src.suffix == ".yaml":
        return f"_pad: '{PAD}'\n".encode() + data
    try:
        doc = json.loads(data)
    except ValueError:  # JSON Lines: the first line gets the long key
        first, rest = data.split(b"\n", 1)
        return json.dumps({"_pad": PAD, **json.loads(first)}).encode() + b"\n" + rest
    if isinstance(doc, list):
        return json.dumps([{"_pad": PAD, **doc[0]}, *doc[1:]]).encode()
    return json.dumps({"_pad": PAD, **doc}).encode()


@pytest.mark.parametrize("src", _files(), ids=lambda p: p.name)
def test_a_100_kb_first_value_does_not_hide_the_format(tmp_path, src):
    fmt = read_runs(str(src)).format
    path = tmp_path / src.name
    path.write_bytes(_padded(src))
    assert path.stat().st_size > 100_000
    assert read_runs(str(path)).format == fmt


def test_the_skeletons_keep_keys_and_cut_long_strings():
    text = json.dumps({"a": "x" * 1000, "b\\\"": "é" * 300, "c": ["\\" * 500]}).encode()
    cut = key_skeleton(text, 1 << 16)
    assert len(cut) < 700 and json.loads(cut).keys() == {"a", "b\\\"", "c"}
    yaml = b"_pad: '" + b"y" * 5000 + b"'\nbody: |-\n" + b"        deep line\n" * 10_000 + b"interactions:\n- request:\n"
    assert line_skeleton(yaml, 1 << 16).endswith(b"\nbody: |-\ninteractions:\n- request:\n")


def test_still_not_recognised_when_no_key_is_known(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"_pad": PAD, "hello": "world"}))
    with pytest.raises(FormatNotRecognised):
        read_runs(str(path))
