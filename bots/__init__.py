"""Reference bots: each plays through the SDK, the games it plays in the registry."""
