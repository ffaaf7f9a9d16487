"""The rules of core/harness/sandbox.py (the network namespace), pinned in process: the probe, the child and its environment monkeypatched."""
