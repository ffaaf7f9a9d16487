"""Widgets of the TUI: the aligned view, the detail pane, the status line, the load error panel."""
