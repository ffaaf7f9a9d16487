"""The namespaced child of one nightly task (``nightly.task``): ``python -m tracetui.core.nightly.child
REQUEST`` where REQUEST is ``{"task": Task.to_json(), "local": recording path, "result": summary path}``.

It confirms the namespace (``sandbox.enter_child``: loopback only; the model relay's listener when the
worker runs one), replays the task there and writes the summary (``nightly.task``) to ``result``
(written whole, then renamed). Exit code 0 when the summary was written, 2 otherwise.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    """Run the request in ``argv[0]``; returns the exit code."""
    from tracetui.core.harness import sandbox
    from tracetui.core.nightly.task import replay_local

    try:
        request = json.loads(argv[0])
        task, local, result = request["task"], request["local"], request["result"]
    except (IndexError, ValueError, KeyError, TypeError):
        print("tracetui.core.nightly.child: expects one argument, a JSON request {task, local, result}",
              file=sys.stderr)
        return 2
    isolation = sandbox.enter_child() if sandbox.inside() else sandbox.ISOLATION_GUARD
    summary = replay_local(task, local, isolation)
    tmp = result + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(summary, fh)
    os.replace(tmp, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
