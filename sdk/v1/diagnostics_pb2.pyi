from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class EchoRequest(_message.Message):
    __slots__ = ("sequence", "payload")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    payload: bytes
    def __init__(self, sequence: _Optional[int] = ..., payload: _Optional[bytes] = ...) -> None: ...

class EchoResponse(_message.Message):
    __slots__ = ("sequence", "payload")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    payload: bytes
    def __init__(self, sequence: _Optional[int] = ..., payload: _Optional[bytes] = ...) -> None: ...

class EchoStreamRequest(_message.Message):
    __slots__ = ("sequence", "payload", "replies", "extra_bytes")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    REPLIES_FIELD_NUMBER: _ClassVar[int]
    EXTRA_BYTES_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    payload: bytes
    replies: int
    extra_bytes: int
    def __init__(self, sequence: _Optional[int] = ..., payload: _Optional[bytes] = ..., replies: _Optional[int] = ..., extra_bytes: _Optional[int] = ...) -> None: ...

class EchoStreamResponse(_message.Message):
    __slots__ = ("sequence", "payload")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    payload: bytes
    def __init__(self, sequence: _Optional[int] = ..., payload: _Optional[bytes] = ...) -> None: ...
