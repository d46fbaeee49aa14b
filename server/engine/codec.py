"""Canonical JSON serialisation of engine values (frozen dataclasses, tuples, enums).

Every game encodes its state with :func:`encode_value` and decodes it with
:func:`decode_value`, so the format is one thing to know: dataclasses become objects with
their field names, tuples become arrays, enums their string values, bytes lowercase hex.
Keys are sorted and there is no whitespace, so equal states give equal bytes and a hash of
the bytes identifies a state. No pickle: decoding builds only the types it is told.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


_SCALARS = frozenset({int, str, bool, float, type(None)})
"""Types :func:`to_plain` passes through as they are, checked first (exactly: an enum
that is also an int or a str is written as its value below)."""


def to_plain(value: Any) -> Any:
    """The JSON-ready form of an engine value."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple or kind is list:
        return [to_plain(v) for v in value]
    names = _field_names(kind)
    if names is not None:
        return {name: to_plain(getattr(value, name)) for name in names}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, bool | int | str | float):
        return value
    raise TypeError(f"cannot encode {type(value).__name__}")


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(kind: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type in their order; None for any other type (kept
    per type: a handful of engine types)."""
    try:
        return _FIELD_NAMES[kind]
    except KeyError:
        pass
    names: tuple[str, ...] | None = None
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        names = tuple(f.name for f in dataclasses.fields(kind))
    _FIELD_NAMES[kind] = names
    return names


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_plain(kind: Any, data: Any) -> Any:
    """The engine value of type ``kind`` that :func:`to_plain` turned into ``data``."""
    origin = typing.get_origin(kind)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(kind)
        if data is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return from_plain(inner, data)
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], v) for v in data)
        return tuple(from_plain(a, v) for a, v in zip(args, data, strict=True))
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = _hints(kind)
        names = {f.name for f in dataclasses.fields(kind)}
        if set(data) != names:
            raise ValueError(f"{kind.__name__}: fields {sorted(data)} != {sorted(names)}")
        return kind(**{name: from_plain(hints[name], data[name]) for name in names})
    if isinstance(kind, type) and issubclass(kind, Enum):
        return kind(data)
    if kind is bytes:
        return bytes.fromhex(data)
    if kind in (int, str, bool, float):
        if not isinstance(data, kind) or (kind is int and isinstance(data, bool)):
            raise ValueError(f"expected {kind.__name__}, got {type(data).__name__}")
        return data
    raise TypeError(f"cannot decode into {kind!r}")


def encode_value(header: dict[str, Any], value: Any) -> bytes:
    """Canonical bytes of ``value`` under a ``header`` (game id, format version)."""
    document = dict(header)
    document["state"] = to_plain(value)
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def decode_value(header: dict[str, Any], kind: type[T], data: bytes) -> T:
    """The value :func:`encode_value` wrote, after checking the header matches."""
    document = json.loads(data)
    for key, expected in header.items():
        if document.get(key) != expected:
            raise ValueError(f"state header {key}={document.get(key)!r}, expected {expected!r}")
    result: T = from_plain(kind, document["state"])
    return result
