"""SQLite store of analytical states (one database file per run).

Invariants:
- a committed row never changes and is never deleted; SQLite triggers abort
  any UPDATE/DELETE of a committed row, and of the relation-edge rows written
  at commit time, even from raw SQL;
- a state is committed only if every relation target is already committed, so
  the committed relation graph is a DAG whose edges point to earlier commits;
- ``next_state_id`` never returns an id that was returned before or that is
  already stored (``S<n>`` ids saved by callers advance the counter).

Thread-safety: a store owns one connection (opened with
``check_same_thread=False``) guarded by a re-entrant lock, so one store
object may be shared between threads; every public method is atomic.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import ValidationError

from stateguard.errors import StoreError
from stateguard.state import graph as state_graph
from stateguard.state.models import AnalyticalState, StaleMark, StateIndexEntry
from stateguard.state.packing import pack_states

SCHEMA_VERSION = 3
"""Version of the on-disk schema; a version-1 or -2 file is migrated on open (a column
added per version), any other version fails."""

_JSON_FIELDS = (
    "constraints", "used_variables", "conclusions", "relations", "unverified_steps",
    "stale_marks",
)  # fmt: skip
_SCALAR_FIELDS = (
    "id", "issue", "source_step_start", "source_step_end", "checkpoint_id",
    "status", "turn", "created_at", "committed_at",
)  # fmt: skip
_COLUMNS = _SCALAR_FIELDS + _JSON_FIELDS
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM states"
_STATE_ID_RE = re.compile(r"^S(\d+)$")
_MIGRATE_1_TO_2 = """
BEGIN IMMEDIATE;
ALTER TABLE states ADD COLUMN unverified_steps TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(unverified_steps));
UPDATE schema_version SET version = 2;
COMMIT;
"""
_MIGRATE_2_TO_3 = """
BEGIN IMMEDIATE;
ALTER TABLE states ADD COLUMN stale_marks TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(stale_marks));
UPDATE schema_version SET version = 3;
COMMIT;
"""

_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE states (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('draft', 'committed', 'abandoned')),
    turn INTEGER,
    commit_seq INTEGER UNIQUE,
    issue TEXT NOT NULL,
    source_step_start INTEGER,
    source_step_end INTEGER,
    checkpoint_id TEXT,
    created_at REAL,
    committed_at REAL,
    constraints TEXT NOT NULL CHECK (json_valid(constraints)),
    used_variables TEXT NOT NULL CHECK (json_valid(used_variables)),
    conclusions TEXT NOT NULL CHECK (json_valid(conclusions)),
    relations TEXT NOT NULL CHECK (json_valid(relations)),
    unverified_steps TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(unverified_steps)),
    stale_marks TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(stale_marks)),
    CHECK ((status = 'committed') = (commit_seq IS NOT NULL))
);
CREATE INDEX states_status ON states (status, commit_seq);
CREATE INDEX states_turn ON states (turn);
CREATE TABLE relation_edges (
    state_id TEXT NOT NULL REFERENCES states (id),
    type TEXT NOT NULL,
    related_state_id TEXT NOT NULL REFERENCES states (id),
    PRIMARY KEY (state_id, type, related_state_id)
);
CREATE INDEX relation_edges_target ON relation_edges (related_state_id);
CREATE TRIGGER committed_state_no_update BEFORE UPDATE ON states
WHEN OLD.status = 'committed'
BEGIN SELECT RAISE(ABORT, 'committed analytical state is immutable'); END;
CREATE TRIGGER committed_state_no_delete BEFORE DELETE ON states
WHEN OLD.status = 'committed'
BEGIN SELECT RAISE(ABORT, 'committed analytical state cannot be deleted'); END;
CREATE TRIGGER relation_edge_no_update BEFORE UPDATE ON relation_edges
BEGIN SELECT RAISE(ABORT, 'relation edges of committed states are immutable'); END;
CREATE TRIGGER relation_edge_no_delete BEFORE DELETE ON relation_edges
BEGIN SELECT RAISE(ABORT, 'relation edges of committed states cannot be deleted'); END;
"""


class StateStore:
    """Append-only store of analytical states backed by one SQLite file.

    ``path`` may be ``":memory:"`` for a throwaway store. Use as a context
    manager or call ``close()``.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._init_schema()
        except sqlite3.Error as exc:
            self.close()
            raise StoreError(f"open state store {self.path}: {exc}") from exc

    # -- infrastructure -------------------------------------------------

    def _init_schema(self) -> None:
        conn = self._connection("open")
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if exists is None:
            conn.executescript(
                "BEGIN IMMEDIATE;\n"
                + _SCHEMA
                + f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION});\n"
                + "COMMIT;"
            )
            return
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is not None and row["version"] == 1:
            conn.executescript(_MIGRATE_1_TO_2)
            row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is not None and row["version"] == 2:
            conn.executescript(_MIGRATE_2_TO_3)
            row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None or row["version"] != SCHEMA_VERSION:
            found = None if row is None else row["version"]
            self.close()
            raise StoreError(
                f"open state store {self.path}: schema version {found}, expected {SCHEMA_VERSION}"
            )

    def _connection(self, op: str) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"{op}: state store {self.path} is closed")
        return self._conn

    @contextmanager
    def _tx(self, op: str) -> Iterator[sqlite3.Connection]:
        """Run the body in one IMMEDIATE transaction; sqlite errors become StoreError."""
        with self._lock:
            conn = self._connection(op)
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"{op}: {exc}") from exc
            try:
                yield conn
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"{op}: {exc}") from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    @staticmethod
    def _to_row(state: AnalyticalState) -> dict[str, Any]:
        data = state.model_dump(mode="json")
        row = {k: data[k] for k in _SCALAR_FIELDS}
        row.update({k: json.dumps(data[k], sort_keys=True) for k in _JSON_FIELDS})
        return row

    @staticmethod
    def _from_row(row: sqlite3.Row) -> AnalyticalState:
        data = {k: row[k] for k in _SCALAR_FIELDS}
        data.update({k: json.loads(row[k]) for k in _JSON_FIELDS})
        return AnalyticalState.model_validate(data)

    def _fetch(self, conn: sqlite3.Connection, state_id: str, op: str) -> AnalyticalState:
        row = conn.execute(f"{_SELECT} WHERE id = ?", (state_id,)).fetchone()
        if row is None:
            raise StoreError(f"{op} {state_id}: unknown state id")
        return self._from_row(row)

    def _bump_counter(self, conn: sqlite3.Connection, state_id: str) -> None:
        match = _STATE_ID_RE.match(state_id)
        if match:
            conn.execute(
                "INSERT INTO counters (name, value) VALUES ('state_id', ?) "
                "ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
                (int(match.group(1)),),
            )

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise StoreError."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writes ------------------------------------------------------------

    def next_state_id(self) -> str:
        """Reserve and return the next id (``S1``, ``S2``, …; persisted, monotonic)."""
        with self._tx("next_state_id") as conn:
            row = conn.execute("SELECT value FROM counters WHERE name = 'state_id'").fetchone()
            number = (0 if row is None else row["value"]) + 1
            self._bump_counter(conn, f"S{number}")
        return f"S{number}"

    def save_draft(self, state: AnalyticalState) -> AnalyticalState:
        """Insert or replace the draft ``state``; returns it as stored.

        ``created_at`` is filled with the current time if unset. Refuses a
        non-draft ``state`` and an id already committed or abandoned.
        """
        with self._tx(f"save_draft {state.id}") as conn:
            return self._save_draft(conn, state, "save_draft")

    def _save_draft(
        self, conn: sqlite3.Connection, state: AnalyticalState, op_name: str
    ) -> AnalyticalState:
        op = f"{op_name} {state.id}"
        if state.status != "draft":
            raise StoreError(f"{op}: status is {state.status!r}, only drafts can be saved")
        if state.created_at is None:
            state = state.with_changes(created_at=time.time())
        row = self._to_row(state)
        existing = conn.execute("SELECT status FROM states WHERE id = ?", (state.id,)).fetchone()
        if existing is not None and existing["status"] != "draft":
            raise StoreError(f"{op}: state is already {existing['status']}")
        if existing is None:
            placeholders = ", ".join(f":{c}" for c in _COLUMNS)
            conn.execute(f"INSERT INTO states ({', '.join(_COLUMNS)}) VALUES ({placeholders})", row)
        else:
            assignments = ", ".join(f"{c} = :{c}" for c in _COLUMNS if c != "id")
            conn.execute(f"UPDATE states SET {assignments} WHERE id = :id", row)
        self._bump_counter(conn, state.id)
        return state

    def commit(self, state: str | AnalyticalState) -> AnalyticalState:
        """Commit a draft (by id, or a draft object which is saved first); returns it.

        In one transaction (including the save of a draft object): the row
        becomes ``committed`` with ``committed_at`` and the next commit
        sequence number, and its relation edges are written. Fails, changing
        nothing, if the state is already committed or abandoned, if its issue
        is blank, or if a relation target is not a committed state.
        """
        state_id = state if isinstance(state, str) else state.id
        op = f"commit {state_id}"
        with self._tx(op) as conn:
            if isinstance(state, AnalyticalState):
                self._save_draft(conn, state, "commit")
            draft = self._fetch(conn, state_id, "commit")
            if draft.status != "draft":
                raise StoreError(f"{op}: state is already {draft.status}")
            for target in draft.related_ids:
                row = conn.execute("SELECT status FROM states WHERE id = ?", (target,)).fetchone()
                if row is None or row["status"] != "committed":
                    what = "unknown" if row is None else row["status"]
                    raise StoreError(
                        f"{op}: relation target {target} is {what}, must be committed first"
                    )
            try:
                committed = draft.with_changes(status="committed", committed_at=time.time())
            except ValidationError as exc:
                raise StoreError(f"{op}: invalid state: {exc}") from exc
            (last,) = conn.execute("SELECT max(commit_seq) FROM states").fetchone()
            row = self._to_row(committed)
            row["commit_seq"] = (last or 0) + 1
            conn.execute(
                "UPDATE states SET status = :status, committed_at = :committed_at, "
                "commit_seq = :commit_seq WHERE id = :id AND status = 'draft'",
                row,
            )
            conn.executemany(
                "INSERT INTO relation_edges (state_id, type, related_state_id) VALUES (?, ?, ?)",
                [
                    (state_id, r.type, r.related_state_id)
                    for r in committed.relations
                    if r.related_state_id is not None
                ],
            )
        return committed

    def abandon(self, state_id: str) -> AnalyticalState:
        """Mark a draft as abandoned (terminal); returns it. Non-drafts raise StoreError."""
        op = f"abandon {state_id}"
        with self._tx(op) as conn:
            draft = self._fetch(conn, state_id, "abandon")
            if draft.status != "draft":
                raise StoreError(f"{op}: state is {draft.status}, only drafts can be abandoned")
            abandoned = draft.with_changes(status="abandoned")
            conn.execute("UPDATE states SET status = 'abandoned' WHERE id = ?", (state_id,))
        return abandoned

    # -- reads -------------------------------------------------------------

    def get(self, state_id: str) -> AnalyticalState:
        """Return the stored state ``state_id`` (any status)."""
        with self._lock:
            return self._fetch(self._connection(f"get {state_id}"), state_id, "get")

    def _select(self, op: str, where: str) -> list[AnalyticalState]:
        with self._lock:
            rows = self._connection(op).execute(f"{_SELECT} WHERE {where}").fetchall()
        return [self._from_row(r) for r in rows]

    def drafts(self) -> list[AnalyticalState]:
        """Current drafts, in order of first save."""
        return self._select("drafts", "status = 'draft' ORDER BY seq")

    def committed(self) -> list[AnalyticalState]:
        """Committed states in commit order."""
        return self._select("committed", "status = 'committed' ORDER BY commit_seq")

    def index(self) -> list[StateIndexEntry]:
        """Compact summaries of the committed states, in commit order."""
        return [StateIndexEntry.of(s) for s in self.committed()]

    # -- graph queries -------------------------------------------------------

    def _graph_for(self, state_id: str, op: str) -> nx.DiGraph:
        """Committed graph, plus ``state_id`` with its outgoing edges if not committed."""
        with self._lock:
            subject = self._fetch(self._connection(f"{op} {state_id}"), state_id, op)
            committed = self.committed()
        if subject.status != "committed":
            committed.append(subject)
        return state_graph.build_graph(committed)

    def related(self, state_id: str) -> list[str]:
        """Ids directly related to ``state_id`` in either direction, in commit order.

        The graph holds committed states; a draft or abandoned ``state_id`` is
        added with its relations to committed states.
        """
        return state_graph.related(self._graph_for(state_id, "related"), state_id)

    def upstream(self, state_id: str) -> list[str]:
        """Transitive ancestors (states ``state_id`` builds on), in commit order."""
        return state_graph.upstream(self._graph_for(state_id, "upstream"), state_id)

    def downstream(self, state_id: str) -> list[str]:
        """Transitive descendants (committed states building on ``state_id``), in commit order."""
        return state_graph.downstream(self._graph_for(state_id, "downstream"), state_id)

    def invalidated_by(self, new_state: AnalyticalState) -> list[str]:
        """Committed states invalidated by ``new_state``, in commit order.

        See ``stateguard.state.graph.invalidated_by`` for the exact rule.
        """
        return state_graph.invalidated_by(self.committed(), new_state)

    def invalidation_map(self) -> dict[str, tuple[str, ...]]:
        """Stale committed state id -> ids of the later committed states invalidating it."""
        return state_graph.invalidation_map(self.committed())

    def stale_marks(self) -> dict[str, tuple[StaleMark, ...]]:
        """Stale committed state id -> the marks later commits recorded on it (which version
        is stale, and what superseded it). See ``stateguard.state.graph.stale_marks``."""
        return state_graph.stale_marks(self.committed())

    def stale_states(self) -> set[str]:
        """Committed states invalidated (directly or transitively) by a later committed state."""
        return set(self.invalidation_map())

    def pack_hint_states(self, state_ids: Sequence[str], max_chars: int = 2000) -> str:
        """Pack the given committed states into deterministic text of <= ``max_chars``.

        ``state_ids`` is in priority order (first = most relevant); duplicates
        are ignored. One line per state in commit order; stale states are
        marked ``(INVALIDATED by …)``. See ``stateguard.state.packing``.
        """
        if max_chars < 0:
            raise StoreError(f"pack_hint_states: max_chars must be >= 0, got {max_chars}")
        committed = self.committed()
        by_id = {s.id: s for s in committed}
        chosen = []
        for state_id in dict.fromkeys(state_ids):
            if state_id not in by_id:
                raise StoreError(
                    f"pack_hint_states {state_id}: not a committed state of {self.path}"
                )
            chosen.append(by_id[state_id])
        return pack_states(
            chosen,
            commit_order={s.id: i for i, s in enumerate(committed)},
            invalidators=state_graph.invalidation_map(committed),
            max_chars=max_chars,
        )
