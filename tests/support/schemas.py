"""The JSON Schemas the package ships (engine/data/schemas/), read as an installed reader would, and checks."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import jsonschema


def package_schema(name: str) -> dict[str, Any]:
    """A schema as the installed package ships it (package data, not the checkout's path), itself checked."""
    text = files("docbridge.engine").joinpath("data", "schemas", name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def assert_valid(payload: Any, schema: dict[str, Any], *, shown: int = 20) -> None:
    """Every error of `payload` against `schema`, by path, in the failure message."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:shown])


def assert_invalid(payload: Any, schema: dict[str, Any]) -> None:
    assert not jsonschema.Draft202012Validator(schema).is_valid(payload), payload
