"""A workload's ``data_sources`` entries resolved against the files of a data lake.

KramaBench's workloads name their sources loosely: usually a bare file name whose file
sits several folders deep, sometimes a path, a glob (``State MSA Identity Theft
Data/*``) or a folder (``State MSA Identity Theft Data/``), and the letter case may
differ from the lake's. `resolve_source` maps one entry to the lake files it stands
for, in this order, and says how:

1. a file whose relative path is the entry, or ends with ``/`` + the entry;
2. for a bare name (no ``/``), every file of that name anywhere in the tree: more than
   one is *ambiguous* (all are kept, and the resolution says so);
3. for a folder (a trailing ``/``, or an entry naming a folder of the lake), every file
   under it; for a glob, every file whose path, or a trailing part of it, matches;
4. when nothing matches with the entry's own case, the same steps ignoring case
   (``case_insensitive``: the resolution says it had to).

An entry that matches nothing resolves to no file (``unresolved``), and callers report
it with the task id.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

_GLOB = frozenset("*?[")


class SourceResolution(BaseModel):
    """What one ``data_sources`` entry stands for in the lake."""

    model_config = ConfigDict(frozen=True)

    entry: str
    files: tuple[str, ...] = ()
    """Lake files (relative paths, ``/``-separated), in path order."""
    kind: str = "file"
    """``file``, ``folder`` or ``glob``."""
    case_insensitive: bool = False
    """Only a match ignoring letter case was found."""
    ambiguous: bool = False
    """A bare file name found in more than one folder."""

    @property
    def unresolved(self) -> bool:
        """The entry matches no file of the lake."""
        return not self.files

    def note(self) -> str | None:
        """A sentence saying what was needed to resolve the entry, or None."""
        if self.unresolved:
            return f"{self.entry!r} matches no file of the lake"
        notes = []
        if self.case_insensitive:
            notes.append("matched ignoring letter case")
        if self.ambiguous:
            notes.append(f"ambiguous: {len(self.files)} files of that name")
        if not notes:
            return None
        shown = ", ".join(self.files[:3]) + (" …" if len(self.files) > 3 else "")
        return f"{self.entry!r}: {'; '.join(notes)} ({shown})"


def _tails(path: str, depth: int) -> str:
    return "/".join(path.split("/")[-depth:])


def _match(entry: str, files: Sequence[str], fold: bool) -> tuple[list[str], str]:
    def norm(text: str) -> str:
        return text.casefold() if fold else text

    folder = entry.endswith("/")
    name = norm(entry.strip("/"))
    keyed = [(norm(f), f) for f in files]
    if any(c in _GLOB for c in name):
        depth = name.count("/") + 1
        hits = [f for k, f in keyed if fnmatch.fnmatchcase(_tails(k, depth), name)]
        if not hits and not name.endswith("*"):  # a glob naming folders: their files
            hits = [
                f
                for k, f in keyed
                if any(
                    fnmatch.fnmatchcase(_tails(k.rsplit("/", i)[0], depth), name)
                    for i in range(1, k.count("/") + 1)
                )
            ]
        return hits, "glob"
    if not folder:
        hits = [f for k, f in keyed if k == name or k.endswith("/" + name)]
        if hits:
            return hits, "file"
    under = [f for k, f in keyed if k.startswith(name + "/") or f"/{name}/" in f"/{k}"]
    return under, "folder"


def resolve_source(entry: str, files: Sequence[str]) -> SourceResolution:
    """The lake files ``entry`` stands for (see the module docstring)."""
    cleaned = entry.strip().replace("\\", "/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    if not cleaned.strip("/"):
        return SourceResolution(entry=entry)
    for fold in (False, True):
        hits, kind = _match(cleaned, files, fold)
        if hits:
            ordered = tuple(sorted(dict.fromkeys(hits)))
            bare = kind == "file" and "/" not in cleaned.strip("/")
            return SourceResolution(
                entry=entry,
                files=ordered,
                kind=kind,
                case_insensitive=fold,
                ambiguous=bare and len({f.rsplit("/", 1)[0] for f in ordered}) > 1,
            )
    kind = (
        "glob" if any(c in _GLOB for c in cleaned) else "folder" if entry.endswith("/") else "file"
    )
    return SourceResolution(entry=entry, kind=kind)


def resolve_sources(entries: Iterable[str], files: Sequence[str]) -> tuple[SourceResolution, ...]:
    """`resolve_source` for each entry, in order, each entry once."""
    return tuple(resolve_source(e, files) for e in dict.fromkeys(entries))


def resolved_files(resolutions: Iterable[SourceResolution]) -> tuple[str, ...]:
    """Every file the resolutions stand for, each once, in order."""
    return tuple(dict.fromkeys(f for r in resolutions for f in r.files))
