"""Shared test setup. pytest puts this folder on ``sys.path`` (rootdir conftest,
``prepend`` import mode), so tests import ``builders``, ``corpus`` and
``otlp_helpers`` directly."""

import os

# The index cache (core.load.index_cache) keeps big files' reads in ~/.cache between openings: off for every test
# (and the CLI processes they start), so that no test reads what another one read; its own tests turn it on in a
# folder of their own.
os.environ["TRACETUI_INDEX_CACHE"] = "0"
