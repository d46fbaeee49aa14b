"""gRPC's standard services as generic tools expect them: health checking and reflection.

* :class:`HealthServicer` is grpcio's asyncio health servicer plus ``List`` (added to
  ``grpc.health.v1.Health`` in 2024; grpcio-health-checking's asyncio servicer does not
  implement it, so without this a ``List`` call fails on the server).
* :func:`enable_reflection` serves reflection as ``grpc.reflection.v1`` (what current
  grpcurl, Postman and ``buf curl`` ask first) as well as ``grpc.reflection.v1alpha``.
  grpcio-reflection ships only v1alpha; v1 has the same messages field for field, so the
  v1alpha servicer answers both, and the v1 file is added to the descriptor pool (built
  from the v1alpha file with the package renamed) so that reflection can describe itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health_pb2
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1ALPHA = reflection.SERVICE_NAME


class HealthServicer(health_aio.HealthServicer):  # type: ignore[misc]  # untyped grpc
    """grpcio's asyncio health servicer, with ``List``."""

    def __init__(self) -> None:
        super().__init__()
        self._statuses: dict[str, int] = {"": health_pb2.HealthCheckResponse.SERVING}

    async def set(self, service: str, status: int) -> None:
        """Set a service's status (as grpcio's servicer does) and remember it for List."""
        await super().set(service, status)
        self._statuses[service] = status

    async def List(
        self, request: health_pb2.HealthListRequest, context: Any
    ) -> health_pb2.HealthListResponse:
        """Every service's status."""
        return health_pb2.HealthListResponse(
            statuses={
                name: health_pb2.HealthCheckResponse(status=status)
                for name, status in self._statuses.items()
            }
        )


def _add_reflection_v1_descriptor(pool: Any) -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` into ``pool`` (once)."""
    name = "grpc/reflection/v1/reflection.proto"
    try:
        pool.FindFileByName(name)
        return
    except KeyError:
        pass
    file = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    file.name = name
    file.package = "grpc.reflection.v1"
    prefix = ".grpc.reflection.v1alpha."
    for message in file.message_type:
        for field in message.field:
            if field.type_name.startswith(prefix):
                field.type_name = ".grpc.reflection.v1." + field.type_name[len(prefix) :]
    for service in file.service:
        for method in service.method:
            method.input_type = ".grpc.reflection.v1." + method.input_type[len(prefix) :]
            method.output_type = ".grpc.reflection.v1." + method.output_type[len(prefix) :]
    file.options.Clear()
    pool.Add(file)


def enable_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection v1 and v1alpha on ``server`` for ``service_names`` (both added)."""
    pool = descriptor_pool.Default()
    _add_reflection_v1_descriptor(pool)
    names = [*service_names, REFLECTION_V1, REFLECTION_V1ALPHA]
    servicer = reflection.aio.ReflectionServicer(names, pool=pool)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    v1 = grpc.method_handlers_generic_handler(
        REFLECTION_V1,
        {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                # The v1 messages are the v1alpha messages field for field.
                request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((v1,))
