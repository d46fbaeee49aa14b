"""``python -m speeltafel.server``: run the game server."""

from speeltafel.server.rpc.server import main

main()
