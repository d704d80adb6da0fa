"""`VarKey`: the one parse/format of ``name@vN``."""

from __future__ import annotations

import pytest

from stateguard.types import VarKey


def test_parse_and_format_round_trip() -> None:
    assert VarKey.parse("cost@v2") == VarKey("cost", 2)
    assert str(VarKey("cost", 2)) == "cost@v2"
    part = "orders['margin@2024']@v3"  # a part path may itself contain '@'
    assert VarKey.parse(part) == VarKey("orders['margin@2024']", 3)
    assert str(VarKey.parse(part)) == part


def test_bare_names_and_errors() -> None:
    assert VarKey.name_of("cost") == "cost" and VarKey.name_of("cost@v1") == "cost"
    assert VarKey.is_key("cost@v1") and not VarKey.is_key("cost") and not VarKey.is_key("a@vx")
    with pytest.raises(ValueError, match="name@vN"):
        VarKey.parse("cost")
