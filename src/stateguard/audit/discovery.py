"""Ranking the sources of a lake for a query: BM25 over what the source map knows.

Each source becomes one document: the words of its path (file name weighted
above folders), sheet name and caption, column names, sample values of its text
columns, and for text files their content. Words are split on punctuation and
camelCase, lower-cased, stripped of English stop words and stemmed (Snowball),
so "Wildfire acres burned" finds ``wildfires/acres_burned_by_state.csv``.

The index is `bm25s` (Lucene's BM25 variant over sparse matrices): offline, pure
Python over numpy, and maintained. A query that looks like a path pattern
(``*``, ``?``, ``/`` or a file suffix) matches paths with `fnmatch` first.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

import bm25s
import numpy as np
import Stemmer
from pydantic import BaseModel, ConfigDict

from stateguard.audit.sources import Source, SourceMap

_WORD = re.compile(r"[A-Za-z]+|\d+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_STEMMER = Stemmer.Stemmer("english")
STOP_WORDS = frozenset(
    """a an and are as at be by for from has have how i in is it its of on or that the this
    to was were what when where which who whom why will with do does did than then there
    these those their them they we you your our us me my please using use give find show
    list tell return compute calculate data dataset file files table value values""".split()  # noqa: SIM905
)
"""English stop words, plus words every data question uses and no source name decides."""

PATH_WEIGHT = 3
"""Repetitions of the file name's words in a document (folders and columns get 2)."""
TEXT_CHARS = 4_000
"""Characters of a text source used for ranking."""
PATTERN_SCORE = 1e9
"""Score of a path that matches a path-pattern query (above any BM25 score)."""


def words(text: str) -> list[str]:
    """Lower-cased, stemmed words of `text`, without stop words (digits kept)."""
    out = []
    for chunk in _WORD.findall(_CAMEL.sub(" ", text)):
        w = chunk.lower()
        if w in STOP_WORDS or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(w)
    return _STEMMER.stemWords(out)


def document(source: Source) -> list[str]:
    """The words a source is found by."""
    loc = source.location
    *folders, name = loc.path.split("/")
    stem = name.rsplit(".", 1)[0]
    toks = words(stem) * PATH_WEIGHT
    toks += words(" ".join(folders)) * 2
    for extra in (loc.sheet, loc.caption):
        if extra:
            toks += words(extra) * 2
    for col in source.columns:
        toks += words(col.name) * 2
        toks += words(" ".join(col.sample))
    if source.text:
        toks += words(source.text[:TEXT_CHARS])
    return toks or ["<empty>"]


class Hit(BaseModel):
    """One ranked file: its path, score, and the sources in it that matched."""

    model_config = ConfigDict(frozen=True)

    path: str
    score: float
    sources: tuple[str, ...]
    matched: tuple[str, ...] = ()
    """Query words found in the file's documents."""


def looks_like_pattern(query: str) -> bool:
    """True for ``*.csv``, ``data/2019/``, ``sales.xlsx`` and the like."""
    q = query.strip()
    return (
        bool(q)
        and " " not in q
        and (any(ch in q for ch in "*?[/") or bool(re.search(r"\.\w{2,8}$", q)))
    )


class SourceIndex:
    """A BM25 index over a `SourceMap` (built once; `discover` is cheap)."""

    def __init__(self, source_map: SourceMap) -> None:
        self.map = source_map
        self._sources = list(source_map.sources)
        self._docs = [document(s) for s in self._sources]
        self._vocab = [set(d) for d in self._docs]
        self._bm25 = bm25s.BM25()
        if self._docs:
            self._bm25.index(self._docs, show_progress=False)

    def discover(self, query: str, excluded: Iterable[str] = (), k: int = 10) -> list[Hit]:
        """The `k` best files for `query`, leaving out `excluded` paths or patterns."""
        skip = list(excluded)

        def allowed(path: str) -> bool:
            return not any(path == e or fnmatch.fnmatch(path, e) for e in skip)

        hits: dict[str, Hit] = {}
        if looks_like_pattern(query):
            pat = query.strip().rstrip("/")
            for s in self._sources:
                p = s.location.path
                if allowed(p) and (
                    fnmatch.fnmatch(p, pat)
                    or fnmatch.fnmatch(p.rsplit("/", 1)[-1], pat)
                    or p.startswith(pat + "/")
                ):
                    _add(hits, p, PATTERN_SCORE, s.id, ())
        qwords = [w for w in words(query) if any(w in v for v in self._vocab)]
        if qwords and self._docs:
            scores = self._bm25.get_scores(qwords)
            for i in np.argsort(-scores, kind="stable"):
                if scores[i] <= 0:
                    break
                s = self._sources[i]
                if allowed(s.location.path):
                    matched = tuple(w for w in dict.fromkeys(qwords) if w in self._vocab[i])
                    _add(hits, s.location.path, float(scores[i]), s.id, matched)
        ranked = sorted(hits.values(), key=lambda h: (-h.score, h.path))
        return ranked[:k]


def _add(hits: dict[str, Hit], path: str, score: float, sid: str, matched: tuple[str, ...]) -> None:
    old = hits.get(path)
    if old is None:
        hits[path] = Hit(path=path, score=score, sources=(sid,), matched=matched)
        return
    hits[path] = Hit(
        path=path,
        score=max(old.score, score),
        sources=tuple(dict.fromkeys((*old.sources, sid))),
        matched=tuple(dict.fromkeys((*old.matched, *matched))),
    )
