"""Screens of the TUI: the full pair, the key help, the load warnings."""
