"""Loading one agent file from several threads at once (a Dask worker's threads, nightly) gives each
the whole module, never one still executing (was: "has no 'run'" at random)."""

from __future__ import annotations

import threading

from tracetui.core.harness.agent import load_agent


def test_threads_loading_one_agent_file_all_get_it(tmp_path):
    path = tmp_path / "slow_agent.py"
    path.write_text("import time\ntime.sleep(0.2)\n\ndef run(ctx, input):\n    return 1\n")
    errors: list[str] = []
    names: list[str] = []

    def load() -> None:
        try:
            names.append(load_agent(f"{path}:run").run.__name__)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(repr(exc))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and names == ["run"] * 4
