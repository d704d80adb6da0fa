"""Hint templates: one TOML file of `string.Template` strings (package data by default)."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template

from pydantic import BaseModel, ConfigDict, ValidationError

from stateguard.errors import StateguardError


class HintTemplateError(StateguardError):
    """A hint template file is unreadable or lacks a field; the message names both."""


class HintTemplates(BaseModel):
    """Every string the agent can read from the manager."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    state: str
    error: str
    no_suspects: str
    invalidated: str
    stale: str
    heavy: str
    rollback: str
    rollback_restored: str
    reasons: dict[str, str]
    evidence: dict[str, str]
    compact: dict[str, str]

    @classmethod
    def default(cls) -> HintTemplates:
        """Our fixed, reference-only wording (``templates/default.toml``; read once)."""
        return _default()

    @classmethod
    def load(cls, path: Path | str) -> HintTemplates:
        """A template file of one's own; fields it omits keep the default wording."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise HintTemplateError(f"cannot read hint templates {path}: {exc}") from exc
        return cls.parse(text, str(path), base=cls.default())

    @classmethod
    def parse(cls, text: str, where: str, base: HintTemplates | None = None) -> HintTemplates:
        """Templates from TOML text (``where`` names it in errors)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise HintTemplateError(f"{where}: {exc}") from exc
        if base is not None:
            reasons = {**base.reasons, **data.get("reasons", {})}
            evidence = {**base.evidence, **data.get("evidence", {})}
            compact = {**base.compact, **data.get("compact", {})}
            data = {**base.model_dump(), **data, "reasons": reasons, "evidence": evidence}
            data["compact"] = compact
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise HintTemplateError(f"{where}: {exc}") from exc

    def fill(self, field: str, **values: str) -> str:
        """One template with its ``$placeholders`` filled, surrounding blank lines dropped."""
        return Template(getattr(self, field)).safe_substitute(values).strip()

    def part(self, key: str, **values: str) -> str:
        """One piece of the compact state line (``[compact]``), filled, spaces kept (the
        pieces are joined as they are)."""
        try:
            template = self.compact[key]
        except KeyError:
            raise HintTemplateError(f"the hint templates have no [compact] {key!r}") from None
        return Template(template).safe_substitute(values)


@cache
def _default() -> HintTemplates:
    text = resources.files(__package__).joinpath("templates/default.toml").read_text("utf-8")
    return HintTemplates.parse(text, "stateguard.hints/templates/default.toml")
