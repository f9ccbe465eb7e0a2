"""Typed results read back from the JSON their ``to_dict`` wrote (core, no ROS): the inverse of ``dataclasses.asdict``
followed by :func:`~deadzone_id_ros.training.evaluate.json_clean` (tuples written as lists, NaN written as null).

A results dataclass whose ``to_dict`` is plain ``dataclasses.asdict`` (keys as the fields, nested records as their
own ``to_dict``) inherits :class:`JsonRecord` and needs no code of its own; a type whose ``to_dict`` flattens, renames
or adds computed keys overrides ``from_dict`` and hands the fields it decoded itself to :func:`record_from_dict`.

Decoding follows the field annotations: a dataclass field is read with its type's ``from_dict``, ``list[X]``,
``tuple[X, ...]`` and ``dict[str, X]`` element by element, ``X | None`` keeps None, a ``float`` field or element
reads null back as NaN (json_clean wrote NaN as null), ``Any`` and bare ``dict``/``list`` are taken as they are.
Every error is a :class:`~deadzone_id_ros.errors.DataError` naming the key (``methods.masked.per_seed[0].rmse_mean``);
:func:`read_record` adds the file.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from .errors import DataError

__all__ = ["JsonRecord", "as_object", "decode", "read_record", "record_from_dict", "sub_key", "take"]

R = TypeVar("R")


def sub_key(key: str, name: str | int) -> str:
    """The key path of ``name`` inside ``key`` (``a.b``, ``a[0]``; ``name`` alone at the top)."""
    if isinstance(name, int):
        return f"{key}[{name}]"
    return f"{key}.{name}" if key else name


def _where(key: str) -> str:
    return f"key {key!r}" if key else "the top level"


def as_object(d: object, key: str, what: str) -> Mapping[str, Any]:
    """``d`` when it is a JSON object; else a DataError naming ``key`` and ``what`` was expected there."""
    if not isinstance(d, Mapping):
        raise DataError(f"{_where(key)}: expected an object ({what}), got {d!r:.80}")
    return d


def take(d: Mapping[str, object], name: str, tp: object, key: str) -> Any:
    """``d[name]`` decoded as ``tp`` (:func:`decode`); a DataError names the key when it is missing."""
    if name not in d:
        raise DataError(f"{_where(key)}: missing key {name!r}")
    return decode(tp, d[name], sub_key(key, name))


def decode(tp: object, value: object, key: str, localns: Mapping[str, object] | None = None) -> Any:
    """``value`` (as json.loads gave it) as the annotated type ``tp``.

    Raises:
        DataError: ``value`` does not fit ``tp`` (names ``key``, the expected type and the value).
        TypeError: ``tp`` is a type this decoder does not know (a programming error, not a bad file).
    """
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp in (dict, list) and isinstance(value, tp):
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        for k, option in enumerate(options):
            try:
                return decode(option, value, key, localns)
            except DataError:
                if k == len(options) - 1:
                    raise
    if tp is float:
        if value is None:
            return math.nan  # json_clean writes NaN as null
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value  # an int stays an int: written back the same
    elif tp in (int, str, bool):
        if isinstance(value, tp) and (tp is bool or not isinstance(value, bool)):
            return value
    elif dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, Mapping):
            reader = getattr(tp, "from_dict", None)
            return reader(value, key) if reader is not None else record_from_dict(tp, value, key, localns)
    elif origin is list and isinstance(value, list):
        return [decode(args[0], v, sub_key(key, i), localns) for i, v in enumerate(value)]
    elif origin is tuple and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v, sub_key(key, i), localns) for i, v in enumerate(value))
        if len(args) == len(value):
            return tuple(decode(a, v, sub_key(key, i), localns) for i, (a, v) in enumerate(zip(args, value)))
    elif origin in (dict, Mapping) and isinstance(value, Mapping):
        return {str(k): decode(args[1], v, sub_key(key, str(k)), localns) for k, v in value.items()}
    elif origin is None and tp not in (dict, list):
        raise TypeError(f"{_where(key)}: cannot decode the type {tp!r}")
    raise DataError(f"{_where(key)}: expected {getattr(tp, '__name__', tp)}, got {value!r:.80}")


def record_from_dict(cls: type[R], d: Mapping[str, object], key: str = "", localns: Mapping[str, object] | None = None,
                     **decoded: object) -> R:
    """The dataclass ``cls`` from ``d``, the JSON of its fields (the inverse of ``dataclasses.asdict``).

    Args:
        d: field name -> JSON value; a field with a default may be missing (a ``to_dict`` that leaves out None).
        key: where ``d`` sits in its file, for the messages.  localns: names of annotations imported only for type
        checking.  decoded: fields the caller decoded itself (their keys in ``d`` are not read).

    Raises:
        DataError: ``d`` is not an object, a field without a default is missing, a key is unknown, a value does not
            fit its field, or ``cls`` rejects the values (each names the key).
    """
    as_object(d, key, cls.__name__)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(d) - set(fields) - set(decoded))
    if unknown:
        raise DataError(f"{_where(key)}: unknown key(s) {unknown} for {cls.__name__}; known: {sorted(fields)}")
    hints = typing.get_type_hints(cls, localns=dict(localns or {}))
    kwargs = dict(decoded)
    for name, f in fields.items():
        if name in kwargs:
            continue
        if name in d:
            kwargs[name] = decode(hints[name], d[name], sub_key(key, name), localns)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DataError(f"{_where(key)}: missing key {name!r} of {cls.__name__}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise DataError(f"{_where(key)}: not a valid {cls.__name__}: {err}") from err


def read_record(path: str | Path, reader: typing.Callable[[Mapping[str, object], str], R]) -> R:
    """Read ``path`` (JSON) with ``reader`` (a ``from_dict``).

    Raises:
        FileNotFoundError: ``path`` does not exist.  DataError: not JSON, or not the record ``reader`` reads (the
            message names the file and the key).
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: not valid JSON: {err}") from err
    try:
        return reader(doc, "")
    except DataError as err:
        raise DataError(f"{path}: {err}") from err


class JsonRecord:
    """Mixin of a results dataclass whose ``to_dict`` is ``dataclasses.asdict``: :meth:`from_dict` reads it back."""

    @classmethod
    def from_dict(cls: type[R], d: Mapping[str, Any], key: str = "") -> R:
        """The inverse of ``to_dict`` (``dataclasses.asdict``; NaN written as null read back as NaN).

        Raises:
            DataError: a missing, unknown or malformed key (named, with ``key`` the record's place in its file).
        """
        return record_from_dict(cls, d, key)
