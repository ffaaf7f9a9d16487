"""Promotion writes a case (docs/golden.md "Promotion"): the rules of ``promote``'s writing half, on runs built in
the test (milliseconds each).

- ``case.yaml`` holds its fields in the order of ``PromotedCase.case`` (``schema`` first), keeps a failure statement
  of one line on one line (up to 120 columns) and non-ASCII text as it is; ``owner`` is the one given, else
  ``$USER``, else ``$USERNAME``.
- ``seed.json`` is JSON indented by two spaces, non-ASCII as it is, ending with a newline.
- The case folder is built in a hidden temporary folder beside it (``.<case>.<host>-<pid>-<random>.promote-tmp``,
  core/tempfiles.py) and renamed into place: it gets the mode of a folder made now (0777 less the umask); a case
  that appears under the name meanwhile (before the rename, or by winning the rename) is never replaced: the fork
  is written; a folder that cannot be renamed into place or made is refused naming it, and nothing is left.
- A case found again (``already``) whose ``contract.yaml`` is no mapping gives an empty contract.

What the mutation run of ``promote.py`` left unprocessed (tests/mutation_equivalents.md, round 8c).
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import builders
import pytest
import yaml

import tracetui.core.golden.promote as promote_module
from tracetui.core.golden.promote import GoldenCaseError, PromotedCase, promote
from tracetui.core.harness import Redactor
from tracetui.core.model import Trace

KEY = "promote-write-key-0123456789abcdef"


def _run() -> Trace:
    """An agent and its one write call."""
    return Trace(spans=[builders.make_span("agent", "agent", span_id="r", seq=0, output="Refunded."),
                        builders.make_span("tool", "refund", span_id="t", parent_id="r", seq=1,
                                           arguments={"order": "A"}, output={"ok": True}, effect="write")])


def _promote(to: Path, **kw: object) -> PromotedCase:
    kw = {"name": "case", "failure": "the agent refunded twice", "owner": "qa", "today": dt.date(2026, 3, 2), **kw}
    return promote(_run(), None, to, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]


def _entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


# --------------------------------------------------------------------------- case.yaml and seed.json
def test_the_owner_is_the_one_given_else_user_before_username(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "ann")
    monkeypatch.setenv("USERNAME", "win-user")
    assert _promote(tmp_path / "a", owner=None).case["owner"] == "ann"
    assert _promote(tmp_path / "b", owner="qa").case["owner"] == "qa"


def test_case_yaml_holds_the_fields_in_order_and_a_one_line_failure_on_one_line_as_written(tmp_path: Path) -> None:
    failure = ("the agent told the customer at the café that the refund was issued although the refund call "
               "failed twice")
    assert 80 < len(f"failure: {failure}") < 120
    case = _promote(tmp_path, failure=failure)
    text = (Path(case.path) / "case.yaml").read_text(encoding="utf-8")
    assert text.startswith("schema: tracetui-case/1\nname: case\n")
    assert list(yaml.safe_load(text)) == list(case.case)
    assert list(yaml.safe_load(text)["source"]) == list(case.case["source"])
    assert f"\nfailure: {failure}\n" in text


def test_seed_json_is_indented_by_two_spaces_with_non_ascii_as_it_is(tmp_path: Path) -> None:
    case = _promote(tmp_path, seed={"note": "café au lait", "slots": ["mon"]})
    assert (Path(case.path) / "seed.json").read_text(encoding="utf-8") == (
        '{\n  "note": "café au lait",\n  "slots": [\n    "mon"\n  ]\n}\n')


# --------------------------------------------------------------------------- the case folder
@pytest.mark.usefixtures("umask")
def test_the_case_folder_gets_the_mode_of_a_folder_made_now(tmp_path: Path) -> None:
    for mask, mode in ((0o022, 0o755), (0o027, 0o750)):
        os.umask(mask)
        case = _promote(tmp_path / oct(mask))
        assert os.stat(case.path).st_mode & 0o7777 == mode


def test_the_case_is_built_in_a_hidden_folder_beside_it_named_for_the_case(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    renames: list[tuple[str, str]] = []
    rename = os.rename

    def recording(src: str, dst: str) -> None:
        renames.append((str(src), str(dst)))
        rename(src, dst)

    monkeypatch.setattr(os, "rename", recording)
    case = _promote(tmp_path)
    ((src, dst),) = renames
    assert dst == case.path == str(tmp_path / "case")
    assert os.path.dirname(src) == str(tmp_path)
    assert os.path.basename(src).startswith(".case.") and src.endswith(".promote-tmp")
    assert _entries(tmp_path) == ["case"]


def test_a_case_that_appears_under_the_name_while_writing_is_left_and_the_fork_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = promote_module.make_temp_dir

    def rival_first(folder: str, name: str) -> str:
        tmp = made(folder, name)
        if name == "case":  # another promotion renames its case into place while this one writes
            os.mkdir(os.path.join(folder, name))
            Path(folder, name, "case.yaml").write_text("name: rival\n")
        return tmp

    monkeypatch.setattr(promote_module, "make_temp_dir", rival_first)
    case = _promote(tmp_path)
    assert (case.name, case.parent, case.path) == ("case-fork-2", "case", str(tmp_path / "case-fork-2"))
    assert _entries(tmp_path) == ["case", "case-fork-2"]  # no temporary folder left
    assert _entries(tmp_path / "case") == ["case.yaml"]
    assert (tmp_path / "case" / "case.yaml").read_text() == "name: rival\n"


def test_a_case_that_wins_the_rename_is_left_and_the_fork_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rename = os.rename

    def rival_first(src: str, dst: str) -> None:
        if str(dst) == str(tmp_path / "case"):  # another promotion's case lands first
            os.mkdir(dst)
            Path(dst, "case.yaml").write_text("name: rival\n")
        rename(src, dst)  # ENOTEMPTY: a folder is never renamed onto a non-empty one

    monkeypatch.setattr(os, "rename", rival_first)
    case = _promote(tmp_path)
    assert (case.name, case.parent) == ("case-fork-2", "case")
    assert _entries(tmp_path) == ["case", "case-fork-2"]
    assert (tmp_path / "case" / "case.yaml").read_text() == "name: rival\n"


def test_a_case_folder_that_cannot_be_renamed_into_place_is_refused_naming_it_and_nothing_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[str] = []

    def read_only(src: str, dst: str) -> None:
        tried.append(str(dst))
        assert len(tried) == 1, f"renamed again after the failure: {tried}"  # not under another name
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "rename", read_only)
    with pytest.raises(GoldenCaseError) as exc:
        _promote(tmp_path)
    assert (exc.value.path, exc.value.reason) == (
        str(tmp_path / "case"), f"cannot create the case folder ({os.strerror(errno.EROFS)})")
    assert _entries(tmp_path) == []


def test_a_golden_folder_where_no_case_folder_can_be_made_is_refused_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(folder: str, name: str) -> str:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(promote_module, "make_temp_dir", full)
    with pytest.raises(GoldenCaseError) as exc:
        _promote(tmp_path)
    assert (exc.value.path, exc.value.reason) == (str(tmp_path), f"cannot write there ({os.strerror(errno.ENOSPC)})")
    assert _entries(tmp_path) == []


# --------------------------------------------------------------------------- a case found again
def test_a_case_found_again_whose_contract_is_no_mapping_gives_an_empty_contract(tmp_path: Path) -> None:
    first = _promote(tmp_path)
    (Path(first.path) / "contract.yaml").write_text("- not\n- a mapping\n")  # found by its source, not its text
    again = _promote(tmp_path)
    assert (again.already, again.name, again.contract) == (True, "case", {})
    assert again.case == yaml.safe_load((Path(first.path) / "case.yaml").read_text())
