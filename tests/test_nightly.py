"""tracetui nightly: a store recorded from the sample agent, replayed on real Dask clusters."""

from __future__ import annotations

import importlib.util
import io
import os
import socket
import subprocess
import sys
import time

import orjson
import pytest

distributed = pytest.importorskip("dask.distributed")

from tracetui.cli.main import main  # noqa: E402
from tracetui.core.execute import SerialExecutor  # noqa: E402
from tracetui.core.nightly import NightlyConfig, journal_path, list_store, parse_rule, run_nightly, sample  # noqa: E402
from tracetui.core.nightly.report import RuleError  # noqa: E402
from tracetui.core.nightly.store import StoreEntry, strata_of  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NIGHTLY = os.path.join(ROOT, "sample_runs", "nightly")
KEY = os.path.join(NIGHTLY, "redaction.key")
AGENT = os.path.join(ROOT, "sample_runs", "scheduling", "agent.py") + ":run"
CHANGED = os.path.join(NIGHTLY, "agent_v2.py") + ":run"


@pytest.fixture(autouse=True)
def guard_only(monkeypatch):
    """The replays in this process with the guard alone (a namespaced child per replay costs about
    0.5 s each): tests/core/harness/test_sandbox.py runs nightly in the namespace, and
    test_two_worker_cluster_gives_the_report_of_the_embedded_cluster compares the two."""
    from tracetui.core.harness import sandbox

    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    sandbox.namespace_prefix.cache_clear()
    yield
    sandbox.namespace_prefix.cache_clear()


def _make_store():
    spec = importlib.util.spec_from_file_location("_nightly_make_store", os.path.join(NIGHTLY, "make_store.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build_store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("store"))
    _make_store()(path, 30, damaged=True)
    return path


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        yield c


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _night(store, agent, out, cluster, *extra):
    return _cli("nightly", store, agent, "--sample", "16", "--seed", "2026-11-03", "--out", str(out),
                "--redaction-key-file", KEY, "--scheduler", cluster.scheduler_address, *extra)


def _load(path):
    with open(path, "rb") as fh:
        return orjson.loads(fh.read())


def _stable(report):
    """The report without what depends on the run of the job: its times and where it ran (the
    workers, the network isolation they could have)."""
    r = dict(report)
    r.pop("job")
    r["runs"] = [{k: v for k, v in s.items() if k not in ("seconds", "network_isolation")} for s in r["runs"]]
    return r


def test_changed_agent_spikes_unrecorded_calls_and_exits_1_unchanged_agent_reports_no_change(store, cluster, tmp_path):
    rule = "unrecorded_call_rate > 2x baseline"
    code, _, err = _night(store, AGENT, tmp_path / "n1.json", cluster, "--fail-on", rule,
                          "--baseline", str(tmp_path / "missing.json"))
    assert code == 0, err
    assert "no baseline report" in err
    n1 = _load(tmp_path / "n1.json")
    assert n1["counts"]["diverged"] == 0 and n1["rates"]["unrecorded_call_rate"] == 0.0
    assert n1["counts"]["pass"] > 10
    assert not os.path.exists(journal_path(str(tmp_path / "n1.json")))  # journal removed once the report is whole

    code, out, err = _night(store, AGENT, tmp_path / "n2.json", cluster, "--fail-on", rule,
                            "--baseline", str(tmp_path / "n1.json"))
    assert code == 0, err
    n2 = _load(tmp_path / "n2.json")
    assert n2["baseline"]["changed"] is False and "no change against the baseline" in out
    assert "No change against the baseline." in (tmp_path / "n2.md").read_text()

    code, out, err = _night(store, CHANGED, tmp_path / "n3.json", cluster, "--fail-on", rule,
                            "--baseline", str(tmp_path / "n2.json"))
    assert code == 1, err
    n3 = _load(tmp_path / "n3.json")
    assert n3["rates"]["unrecorded_call_rate"] > 0.5
    assert n3["alerts"][0]["triggered"] is True
    top = n3["groups"][0]
    assert (top["signature"]["type"], top["signature"]["name"]) == ("unrecorded_call", "list_open_slots")
    assert top["count"] == n3["counts"]["diverged"]  # one root cause, one group
    assert top["example"]["name"] in top["runs"]
    assert top["text"] in n3["baseline"]["new_groups"]
    md = (tmp_path / "n3.md").read_text()
    assert md.startswith("## Nightly replay: ALERT") and "unrecorded_call tool list_open_slots" in md
    assert "ALERT: unrecorded_call_rate > 2x baseline" in out


def test_damaged_files_are_reported_and_never_stop_the_batch(store, cluster, tmp_path):
    code, _, err = _cli("nightly", store, AGENT, "--sample", "0", "--out", str(tmp_path / "all.json"),
                        "--redaction-key-file", KEY, "--scheduler", cluster.scheduler_address)
    assert code == 0, err
    r = _load(tmp_path / "all.json")
    assert r["replays"] == 34 and r["sample"]["listed"] == 34
    bad = {u["name"].rsplit("/", 1)[-1]: u for u in r["unreadable"]}
    assert set(bad) == {"cut-mid-write.jsonl", "not-a-trace.jsonl", "empty.jsonl", "unknown-shape.json"}
    assert bad["cut-mid-write.jsonl"]["outcome"] == "incomplete"
    assert bad["empty.jsonl"]["outcome"] == "error" and "empty.jsonl: file is empty" in bad["empty.jsonl"]["message"]
    assert "format not recognised" in bad["not-a-trace.jsonl"]["message"]
    assert r["counts"]["pass"] == 30


def test_the_same_folder_through_an_fsspec_file_url_gives_the_same_report(store, cluster, tmp_path):
    pytest.importorskip("fsspec")
    _night(store, AGENT, tmp_path / "dir.json", cluster)
    code, _, err = _night("file://" + store, AGENT, tmp_path / "url.json", cluster)
    assert code == 0, err
    a, b = _load(tmp_path / "dir.json"), _load(tmp_path / "url.json")
    assert [s["name"] for s in a["runs"]] == [s["name"] for s in b["runs"]]
    assert all(s["path"].startswith("file://") for s in b["runs"])
    assert (a["counts"], a["rates"], a["groups"]) == (b["counts"], b["rates"], b["groups"])


def test_failed_runs_always_sampled_and_ten_thousand_runs_listed_without_reading(tmp_path):
    for i in range(10_000):  # garbage content: listing and sampling must not open a file
        status = "failed" if i % 500 == 0 else "ok"
        agent = "billing" if i % 4 == 0 else "scheduler"
        d = tmp_path / f"agent={agent}" / f"status={status}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"run-{i:05d}.jsonl").write_bytes(b"\x00not a trace")
    (tmp_path / "notes.txt").write_text("not a trace file")
    (tmp_path / "x.labels.json").write_text("{}")
    entries = list_store(str(tmp_path))
    assert len(entries) == 10_000
    s = sample(entries, 100, "seed-1")
    assert s.failed == 20 and all(e in s.entries for e in entries if e.failed)
    assert len(s.entries) == 100
    assert s.strata["billing/-"][1] + s.strata["scheduler/-"][1] == 100
    # the 20 failed runs (all billing), then the other 80 in proportion: billing holds 2480 of the 9980 others
    assert abs(s.strata["billing/-"][1] - (20 + 80 * 2480 / 9980)) <= 1
    assert sample(entries, 100, "seed-1").entries == s.entries
    assert sample(entries, 100, "seed-2").entries != s.entries


def test_what_a_path_says():
    assert strata_of("agent=a/tool=t/2026/run.jsonl") == {"agent": "a", "tool": "t", "failed": False}
    assert strata_of("outcome=error/run.jsonl")["failed"] is True
    assert strata_of("failures/run.jsonl")["failed"] is True
    assert strata_of("2026/run-17.failed.jsonl")["failed"] is True
    assert strata_of("2026/run-17.jsonl")["failed"] is False
    assert sample([StoreEntry("p", "p", failed=True)] * 3, 1, 0).entries == [StoreEntry("p", "p", failed=True)] * 3


def test_a_killed_job_resumes_without_redoing_finished_runs(store, tmp_path):
    config = NightlyConfig(store, AGENT, sample=10, seed="r", key_file=KEY)
    journal = str(tmp_path / "n.json.partial.jsonl")

    def kill_after_4(done, total, summary):
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_nightly(config, SerialExecutor(), journal=journal, progress=kill_after_4)
    with open(journal, "ab") as fh:
        fh.write(b'{"key": "torn')  # the job died mid-line
    with pytest.raises(Exception, match="--resume"):
        run_nightly(config, SerialExecutor(), journal=journal)
    seen = []
    resumed = run_nightly(config, SerialExecutor(), journal=journal, resume=True,
                          progress=lambda d, t, s: seen.append(s["key"]))
    assert resumed["job"]["resumed"] == 4 and len(seen) == 6
    whole = run_nightly(config, SerialExecutor(), journal=str(tmp_path / "w.partial.jsonl"))
    assert _stable(resumed) == _stable(whole)
    other = NightlyConfig(store, AGENT, sample=11, seed="r", key_file=KEY)
    with pytest.raises(Exception, match="another job"):
        run_nightly(other, SerialExecutor(), journal=journal, resume=True)


def test_live_mode_with_trials_and_frozen_together(store, cluster, tmp_path):
    code, _, err = _night(store, CHANGED, tmp_path / "l.json", cluster, "--llm", "frozen", "--llm", "live",
                          "--trials", "2")
    assert code == 0, err  # no rule: no alert
    r = _load(tmp_path / "l.json")
    assert set(r["by_llm"]) == {"frozen", "live"} and r["replays"] == 2 * r["sample"]["sampled"]
    live = [s for s in r["runs"] if s["llm"] == "live" and s["outcome"] == "diverged"]
    assert live and all(s["trials"] == 2 and s["trials_diverged"] == 2 for s in live)
    assert {g["llm"] for g in r["groups"]} == {"frozen", "live"}


@pytest.mark.parametrize("text, metric, number, factor, offset", [
    ("unrecorded_call_rate > 2x baseline", "unrecorded_call_rate", None, 2.0, 0.0),
    ("error_rate >= 5%", "error_rate", 0.05, 1.0, 0.0),
    ("diverged > baseline + 3", "diverged", None, 1.0, 3.0),
    ("new_groups > 0", "new_groups", 0.0, 1.0, 0.0),
])
def test_fail_on_rules(text, metric, number, factor, offset):
    rule = parse_rule(text)
    assert (rule.metric, rule.number, rule.factor, rule.offset) == (metric, number, factor, offset)


def test_bad_rule_and_bad_baseline_are_usage_errors(store, tmp_path):
    with pytest.raises(RuleError, match="unknown metric"):
        parse_rule("flakiness > 2")
    code, _, err = _cli("nightly", store, AGENT, "--out", str(tmp_path / "x.json"), "--fail-on", "error_rate >> 2")
    assert code == 2 and "is neither a number" in err
    (tmp_path / "b.json").write_text('{"rows": []}')
    code, _, err = _cli("nightly", store, AGENT, "--out", str(tmp_path / "x.json"), "--baseline", str(tmp_path / "b.json"))
    assert code == 2 and "not a tracetui nightly report" in err
    code, _, err = _cli("nightly", str(tmp_path / "nope"), AGENT, "--out", str(tmp_path / "x.json"))
    assert code == 2 and "no such folder" in err


def test_without_dask_nightly_says_how_to_get_it(store, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    code, _, err = _cli("nightly", store, AGENT, "--out", str(tmp_path / "x.json"))
    assert code == 2 and "pip install 'tracetui[dask]'" in err


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_worker_cluster_gives_the_report_of_the_embedded_cluster(store, cluster, tmp_path):
    bindir = os.path.dirname(sys.executable)
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    from tracetui.core.harness import sandbox

    env = {**os.environ, "PYTHONPATH": ROOT}
    env.pop(sandbox.ENV_DISABLE)  # the worker processes replay in a namespace where one can be had
    procs = [subprocess.Popen([os.path.join(bindir, "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for i in range(2):
            procs.append(subprocess.Popen([os.path.join(bindir, "dask"), "worker", addr, "--nthreads", "1",
                                           "--nworkers", "1", "--no-dashboard", "--name", f"w{i}"],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(addr, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        code, _, err = _cli("nightly", store, CHANGED, "--sample", "16", "--seed", "2026-11-03",
                            "--out", str(tmp_path / "two.json"), "--redaction-key-file", KEY, "--scheduler", addr)
        assert code == 0, err
        assert "scheduler tcp://127.0.0.1" in err and "(2 worker threads)" in err
        _night(store, CHANGED, tmp_path / "embedded.json", cluster)  # in this process, the guard alone
        two, embedded = _load(tmp_path / "two.json"), _load(tmp_path / "embedded.json")
        assert _stable(two) == _stable(embedded)  # the same results, groups and first divergences
        guard = sandbox.ISOLATION_GUARD
        assert {s["network_isolation"] for s in embedded["runs"]} == {guard}
        sandbox.namespace_prefix.cache_clear()
        os.environ.pop(sandbox.ENV_DISABLE)
        expected = guard if sandbox.namespace_prefix()[0] is None else sandbox.ISOLATION_NAMESPACE
        assert {s["network_isolation"] for s in two["runs"]} == {expected}
        assert two["job"]["network_isolation"] == {expected: two["replays"]}
        assert f"tracetui: network isolation: {expected} ({two['replays']} replays)" in err
        assert f"Network isolation: {expected} ({two['replays']})." in (tmp_path / "two.md").read_text()
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def test_triage_batch_on_dask_gives_the_serial_report(cluster):
    folder = os.path.join(ROOT, "sample_runs")
    code_s, serial, _ = _cli("triage", "--batch", folder, "--format", "json")
    code_d, on_dask, err = _cli("triage", "--batch", folder, "--format", "json", "--scheduler", cluster.scheduler_address)
    assert "triage --batch on Dask" in err
    assert code_d == code_s == 1 and orjson.loads(on_dask) == orjson.loads(serial)
    assert orjson.loads(serial)["groups"]
