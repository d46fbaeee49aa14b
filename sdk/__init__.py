"""speeltafel Python SDK: sync and async clients, the Bot protocol and a runner."""
