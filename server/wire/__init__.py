"""Mapping between engine values and protobuf messages: one module per game plus common."""
