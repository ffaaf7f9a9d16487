"""`python -m tracetui` runs the CLI."""

from tracetui.cli.entry import main

raise SystemExit(main())
