"""One registry of checks: named functions from a step context to `Finding`s.

A check is registered with ``@registry.check`` and run, in registration order, by
`CheckRegistry.run`. The registry is generic over the context a check reads, so the
same machinery runs the verifier's rules over a trajectory step and any other consumer's
checks over theirs; each check declares the evidence it may rest on, and a finding that
claims another basis is refused (`CheckError`).

    registry: CheckRegistry[MyContext] = CheckRegistry("mine")

    @registry.check(basis=("code",))
    def fixed_by_form(ctx: MyContext) -> list[Finding]: ...

    findings = registry.run(ctx)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from stateguard.finding import Basis, Finding

C = TypeVar("C")

CheckFn = Callable[[C], list[Finding]]


class CheckError(ValueError):
    """A check registered twice, looked up by a name never registered, or returning a
    finding outside what it declared."""


@dataclass(frozen=True)
class Check(Generic[C]):
    """A registered check: its name, the evidence it may rest on, and its function."""

    name: str
    basis: frozenset[Basis]
    fn: Callable[[C], list[Finding]]

    def __call__(self, ctx: C) -> list[Finding]:
        found = self.fn(ctx)
        for f in found:
            extra = set(f.basis) - self.basis
            if extra:
                raise CheckError(
                    f"check {self.name!r} returned a finding resting on {sorted(extra)}, "
                    f"outside its declared basis {sorted(self.basis)}"
                )
        return found


class CheckRegistry(Generic[C]):
    """Named checks over one kind of context, run in the order they were registered."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._checks: dict[str, Check[C]] = {}

    def check(
        self, *, basis: Iterable[Basis], name: str | None = None
    ) -> Callable[[Callable[[C], list[Finding]]], Check[C]]:
        """Register the decorated function (under ``name``, default its own name), which may
        return findings resting on ``basis`` only."""

        def register(fn: Callable[[C], list[Finding]]) -> Check[C]:
            key = name or fn.__name__
            if key in self._checks:
                raise CheckError(f"check {key!r} is already registered in {self.name!r}")
            made = Check(name=key, basis=frozenset(basis), fn=fn)
            self._checks[key] = made
            return made

        return register

    def __iter__(self) -> Iterator[Check[C]]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)

    def __getitem__(self, name: str) -> Check[C]:
        try:
            return self._checks[name]
        except KeyError:
            known = ", ".join(self._checks)
            raise CheckError(f"no check {name!r} in {self.name!r}; known: {known}") from None

    def select(self, names: Iterable[str]) -> tuple[Check[C], ...]:
        """The checks called ``names``, in registration order."""
        wanted = set(names)
        for n in wanted:
            self[n]  # unknown names fail loudly
        return tuple(c for c in self if c.name in wanted)

    def run(
        self, ctx: C, checks: Sequence[Callable[[C], list[Finding]]] | None = None
    ) -> list[Finding]:
        """Every finding of ``checks`` (default: all registered) on ``ctx``, in order."""
        return [f for c in (tuple(self) if checks is None else checks) for f in c(ctx)]
