"""Protobuf's wire format by hand, for the few hot paths that build views as bytes.

A view is built at every version and most of it is the same from one version to the
next (a Take 5 deal's history, its rows, its penalty piles). Building it field by field
as a message and serialising it is Python work per field; writing those parts as bytes
once and joining them is not. What these helpers write parses to exactly the message the
reference path builds (``tests/wire/test_wire_serialised_views.py`` and
``tests/wire/test_wire_encoding.py`` hold every wire that uses them to that).

The rules kept here are proto3's: a scalar field at its default (0, False, "") is not
written, unless the field has explicit presence (``optional``), which the caller asks for
with ``always=True``; repeated scalars are packed; a message field is its key, its length
and its bytes. Protobuf parses concatenated messages as one merged message, so a part
written here may follow a part serialised by the library.
"""

from __future__ import annotations

from collections.abc import Iterable

_VARINT = 0
_LENGTH = 2


def _varint(value: int) -> bytes:
    """A non-negative int as a varint, written out (the table holds those under 2**14)."""
    if 0x4000 <= value < 0x200000:  # three bytes: a move clock, the time left of it
        return bytes((value & 0x7F | 0x80, value >> 7 & 0x7F | 0x80, value >> 14))
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_TABLE_SIZE = 1 << 14
_TABLE = tuple(
    bytes((n,)) if n < 0x80 else bytes(((n & 0x7F) | 0x80, n >> 7)) for n in range(_TABLE_SIZE)
)
"""Every varint of one or two bytes, made once at import (about 0.7 MB): the keys of all
fields, the lengths of parts under 16 KB and most values are one lookup, not a loop. The
helpers below look keys up unchecked, so field numbers stay under 2**11 (a test holds the
protos to it)."""


def varint(value: int) -> bytes:
    """An unsigned varint (a negative int64 is written as its 64-bit two's complement)."""
    if 0 <= value < _TABLE_SIZE:
        return _TABLE[value]
    if value < 0:
        value += 1 << 64
    return _varint(value)


def key(number: int, wire_type: int) -> bytes:
    """A field's key: its number and wire type."""
    return varint(number << 3 | wire_type)


# The helpers below are on the views' hot path: they look a varint up in the table
# themselves (a Python call less per varint) and call :func:`varint` only for large values.


def uint_field(number: int, value: int, always: bool = False) -> bytes:
    """An integer (uint32, uint64, int64, an enum) field; nothing at 0 unless ``always``."""
    if not value and not always:
        return b""
    if 0 <= value < _TABLE_SIZE:
        return _TABLE[number << 3 | _VARINT] + _TABLE[value]
    return _TABLE[number << 3 | _VARINT] + varint(value)


def bool_field(number: int, value: bool) -> bytes:
    """A bool field; nothing when False."""
    return _TABLE[number << 3 | _VARINT] + b"\x01" if value else b""


def string_field(number: int, value: str) -> bytes:
    """A string field; nothing when empty."""
    if not value:
        return b""
    return embedded_field(number, value.encode())


def packed_uints(number: int, values: Iterable[int]) -> bytes:
    """A packed repeated integer field; nothing when empty."""
    payload = b"".join([_TABLE[v] if 0 <= v < _TABLE_SIZE else varint(v) for v in values])
    return embedded_field(number, payload) if payload else b""


def embedded_field(number: int, payload: bytes) -> bytes:
    """``payload`` (a serialised message, or a string's bytes) as the length-delimited
    field ``number`` of an enclosing message. A message field at its default is still
    written (present and empty), as the library writes a sub-message that was set."""
    size = len(payload)
    if size < _TABLE_SIZE:
        return _TABLE[number << 3 | _LENGTH] + _TABLE[size] + payload
    return _TABLE[number << 3 | _LENGTH] + _varint(size) + payload
