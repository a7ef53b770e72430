"""Typed options of the configurable components: one dataclass per encoder and head class.

Each dataclass (``rnnbench.encoders.options``, ``rnnbench.heads.options``) lists its class's
constructor options with their types and defaults; a closed set of values is a ``StrEnum``.
``options_of`` registers one in ``SCHEMAS`` (``_target_`` -> dataclass) and in Hydra's
ConfigStore beside ``config_schema`` (group ``schema/encoder`` or ``schema/head``, named after
the class: ``ConfigStore.instance().repo["schema"]["encoder"]["LSTMEncoder.yaml"]``).

``check`` compares a composed config node with its class's dataclass and changes nothing: the
dataclasses are never merged into a run's config, whose resolved keys and values are its
identity (``rnnbench.results.identity``), so a default the YAML does not list stays out of it.
Every problem is one ``ConfigError`` line naming the key: a key the class does not take (with
the closest one), a value outside a choice (with the allowed values), a value of the wrong type.
A class without a registered dataclass is checked by its constructor only.

A run's config is checked strictly. A config merely composed may be the base of a sweep over
several classes (an experiment's encoder block holds FHE's options for its FHE rows and is
composed with each encoder of its sweep), so there (``strict=False``) a key that another class of
the same group takes passes, to be checked when a run of that config starts.
"""
from __future__ import annotations

import difflib
import typing
from dataclasses import fields
from enum import Enum
from typing import Union, get_args, get_origin

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from rnnbench.errors import ConfigError

SCHEMAS: dict[str, type] = {}  # the class a config's _target_ names -> the dataclass of its options
GROUP: dict[str, str] = {}  # the class -> its group ("encoder", "head")
# Keys of a config node that are not constructor options: the class to build, and an encoder's
# config name (conf/encoder/<name>.yaml; the builder drops it).
NOT_OPTIONS = ("_target_", "name")


def options_of(group: str):
    """Class decorator: register a dataclass whose ``_target_`` default names the class it describes."""

    def register(schema: type) -> type:
        target = schema._target_
        SCHEMAS[target], GROUP[target] = schema, group
        ConfigStore.instance().store(group=f"schema/{group}", name=target.rsplit(".", 1)[-1], node=schema)
        return schema

    return register


def check(node, where: str, owner: str = "", strict: bool = True) -> None:
    """Check the config ``node`` (an encoder's or a head's, at ``where``: "encoder", "task.head")
    against the dataclass of the class its ``_target_`` names; ``owner`` says whose node it is in
    messages (the encoder's config name, the task). ``strict=False``: a key another class of the
    group takes passes (see the module docstring)."""
    if node is None or "_target_" not in node:
        return
    target = str(node._target_)
    schema = SCHEMAS.get(target)
    if schema is None:
        return
    values = OmegaConf.to_container(node, resolve=True)
    types = typing.get_type_hints(schema)
    options = [f.name for f in fields(schema) if f.name not in NOT_OPTIONS]
    elsewhere = set() if strict else _options_of_group(GROUP[target])
    for key, value in values.items():
        if (key in NOT_OPTIONS and key in types) or (key not in options and key in elsewhere):
            continue
        if key not in options:
            close = difflib.get_close_matches(str(key), options, n=1)
            hint = f"did you mean {close[0]}?" if close else f"its options: {', '.join(options)}"
            whose = f"{target} ({owner})" if owner else target
            raise ConfigError(f"{where}.{key}: not an option of {whose}; {hint}")
        kind = types[key]
        if isinstance(kind, type) and issubclass(kind, Enum):
            check_choice(f"{where}.{key}", value, kind)
            continue
        problem = _problem(value, kind)
        if problem:
            raise ConfigError(f"{where}.{key}={shown(value)}: {problem}")


def _options_of_group(group: str) -> set[str]:
    return {f.name for target, schema in SCHEMAS.items() if GROUP[target] == group for f in fields(schema)}


def check_choice(key: str, value, choices: type[Enum]) -> None:
    """One line when ``value`` is not one of the ``choices`` enum's values."""
    allowed = [member.value for member in choices]
    if str(value) in allowed:
        return
    close = difflib.get_close_matches(str(value), allowed, n=1)
    raise ConfigError(f"{key}={shown(value)}: must be one of {', '.join(allowed)}" + (f"; did you mean {key}={close[0]}?" if close else ""))


def _problem(value, kind) -> str | None:
    """What is wrong with ``value`` as a ``kind`` (a dataclass field's type), or None."""
    if get_origin(kind) is Union:  # Optional[X]
        if value is None:
            return None
        inner = next(arg for arg in get_args(kind) if arg is not type(None))
        problem = _problem(value, inner)
        return problem and f"{problem} or null"
    if get_origin(kind) is list:
        (item,) = get_args(kind)
        if not isinstance(value, list) or any(_problem(v, item) for v in value):
            return f"must be a list of {_plural(item)}"
        return None
    if isinstance(kind, type) and issubclass(kind, Enum):
        allowed = [member.value for member in kind]
        return None if value in allowed else f"must be one of {', '.join(allowed)}"
    if not _is(value, kind):
        return f"must be {_singular(kind)}"
    return None


def _is(value, kind) -> bool:
    if isinstance(value, bool):  # true/false is a bool only, never an integer or a number
        return kind is bool
    if kind is float:  # an integer is a number too (dropout: 0)
        return isinstance(value, (int, float))
    return isinstance(value, kind)


_NAMES = {bool: ("true or false", "true/false values"), int: ("an integer", "integers"),
          float: ("a number", "numbers"), str: ("a string", "strings")}


def _singular(kind) -> str:
    return _NAMES[kind][0]


def _plural(kind) -> str:
    if isinstance(kind, type) and issubclass(kind, Enum):
        return f"values among {', '.join(member.value for member in kind)}"
    return _NAMES[kind][1]


def shown(value) -> str:
    """A value as a config writes it: null, true, [max, mean]."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(shown(v) for v in value)}]"
    return str(value)
