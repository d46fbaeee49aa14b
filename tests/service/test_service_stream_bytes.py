"""The Play stream's answers written as bytes parse as the messages the protos define.

Play and Spectate hand gRPC pre-serialised responses (``add_match_service``): a view as
the version's public bytes plus the seat's part, a result around its own bytes. Here the
field numbers the service writes by hand are held to the generated descriptors, and a
result response to the message the library would have built."""

from __future__ import annotations

from speeltafel.sdk.v1 import match_service_pb2
from speeltafel.server.rpc import service


def test_the_hand_written_field_numbers_are_the_protos() -> None:
    play = match_service_pb2.PlayResponse.DESCRIPTOR.fields_by_name
    spectate = match_service_pb2.SpectateResponse.DESCRIPTOR.fields_by_name
    assert play["view"].number == spectate["view"].number == service.VIEW_FIELD
    assert play["result"].number == service.RESULT_FIELD
    assert match_service_pb2.PlayResponse(resync=True).SerializeToString() == service.RESYNC_TRUE
    assert (
        match_service_pb2.SpectateResponse(resync=True).SerializeToString() == service.RESYNC_TRUE
    )


def test_a_result_response_is_the_librarys_play_response() -> None:
    accepted = match_service_pb2.ActionResult(request_id="r-1")
    accepted.accepted.seq = 0  # a present sub-message at its defaults: still written
    accepted.accepted.SetInParent()
    refused = match_service_pb2.ActionResult(request_id="r-2")
    refused.error.code = 9
    refused.error.message = "stale " * 40  # a length over one varint byte
    for result in (accepted, refused, match_service_pb2.ActionResult()):
        data = service._result_response(result)
        assert data == match_service_pb2.PlayResponse(result=result).SerializeToString()
        parsed = match_service_pb2.PlayResponse.FromString(data)
        assert parsed.WhichOneof("event") == "result"
        assert parsed.result == result
