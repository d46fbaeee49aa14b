"""``python -m speeltafel.cli``: the ``speeltafel`` command."""

from speeltafel.cli.main import main

main()
