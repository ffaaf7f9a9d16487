"""Shared test setup. pytest puts this folder on ``sys.path`` (rootdir conftest,
``prepend`` import mode), so tests import ``builders``, ``corpus`` and
``otlp_helpers`` directly."""
