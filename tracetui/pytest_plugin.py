"""pytest plugin: golden cases as tests (docs/golden.md "Running cases").

    pytest --tracetui-golden golden/ --tracetui-agent agent.py:run

collects one test per case (node id ``golden/NAME``), replays the agent against the case (or, with
``--tracetui-replay``, checks that replay) and checks its contract (``tracetui.core.golden``):

- ``pass`` passes; ``fail`` fails, the report listing every violated clause with its span;
- ``diverged`` is **skipped** with the reason ``DIVERGED: ...`` (the first divergence and the hint to
  convert the case to fixture mode), so it is counted apart from passes and failures;
  ``--tracetui-strict-divergence`` fails it instead;
- ``error`` (a damaged case, an agent that cannot be loaded) fails with the error.

Registered as the ``tracetui`` entry point of ``pytest11``. Without ``--tracetui-golden`` it adds
nothing to the run. Imports of tracetui's core happen only when cases are collected.
"""

from __future__ import annotations

import os
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tracetui", "tracetui golden cases")
    group.addoption("--tracetui-golden", metavar="DIR", default=None,
                    help="collect one test per golden case under DIR (golden/NAME/{case,contract}.yaml, trace.jsonl)")
    group.addoption("--tracetui-agent", metavar="AGENT", default=None,
                    help="the agent to replay against each case (module:function or file.py:function; default: "
                         "each case's case.yaml `agent`)")
    group.addoption("--tracetui-replay", metavar="REPLAY.jsonl", default=None,
                    help="check this replay trace against every case instead of running an agent")
    group.addoption("--tracetui-trials", metavar="K", type=int, default=None,
                    help="trials per case (default: each contract's trials.count)")
    group.addoption("--tracetui-strict-divergence", action="store_true", default=False,
                    help="fail a diverged case instead of skipping it")


class GoldenCaseFailed(Exception):
    """Raised by a golden item whose case failed or errored; ``repr_failure`` shows its text."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class GoldenItem(pytest.Item):
    """One golden case as a test."""

    def __init__(self, *, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.result: Any = None

    def runtest(self) -> None:
        from tracetui.cli.golden_cmd import case_lines
        from tracetui.core.golden.runner import run_case

        opt = self.config.getoption
        self.result = result = run_case(self.case, agent=opt("tracetui_agent"), replay=opt("tracetui_replay"),
                                        trials=opt("tracetui_trials"))
        self.user_properties.append(("tracetui_outcome", result.outcome))
        if result.outcome == "pass":
            return
        text = "\n".join(case_lines(result))
        if result.outcome == "diverged" and not opt("tracetui_strict_divergence"):
            try:  # reported at the case, not at this line (pytest >= 7; private keyword)
                exc = pytest.skip.Exception(text, _use_item_location=True)
            except TypeError:
                exc = pytest.skip.Exception(text)
            raise exc
        raise GoldenCaseFailed(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GoldenCaseFailed):
            return f"golden case {self.case.name} ({self.case.path}):\n{excinfo.value.text}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.path, 0, f"golden case {self.case.name}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add one GoldenItem per case of ``--tracetui-golden`` (before -k/-m deselection runs)."""
    folder = config.getoption("tracetui_golden", None)
    if not folder:
        return
    from pathlib import Path

    from tracetui.core.golden.contract import GoldenCaseError
    from tracetui.core.golden.runner import find_cases

    try:
        cases = find_cases(folder)
    except GoldenCaseError as exc:
        raise pytest.UsageError(f"--tracetui-golden: {exc}") from None
    if not cases:
        raise pytest.UsageError(f"--tracetui-golden {folder}: no golden cases there (each case is a folder holding "
                                "case.yaml, contract.yaml and trace.jsonl)")
    added: list[pytest.Item] = []
    for case in cases:
        nodeid = f"golden/{os.path.basename(os.path.normpath(case.path))}"
        added.append(GoldenItem.from_parent(session, name=nodeid, nodeid=nodeid, path=Path(case.path).resolve(),
                                            case=case))
    items.extend(added)
    # counted in "collected N items" like any collected test
    session.ihook.pytest_collectreport(report=pytest.CollectReport("golden", "passed", None, added))
