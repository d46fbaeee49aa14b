"""Thin grpc.aio servicers, interceptors and the server entry point."""
