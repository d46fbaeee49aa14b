"""speeltafel server: the rules engine, wire mapping, match runtime, store and gRPC service."""
