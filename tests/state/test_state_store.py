"""StateStore CRUD, lifecycle, persistence and the immutability trigger."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from stateguard.errors import StoreError
from stateguard.state import SCHEMA_VERSION, StateIndexEntry, StateStore


def test_next_state_id_is_monotonic(store: StateStore) -> None:
    assert [store.next_state_id() for _ in range(3)] == ["S1", "S2", "S3"]


def test_next_state_id_skips_ids_saved_by_caller(store: StateStore, mk) -> None:
    store.save_draft(mk("S7"))
    store.save_draft(mk("custom-id"))
    assert store.next_state_id() == "S8"


def test_save_draft_and_get(store: StateStore, mk) -> None:
    saved = store.save_draft(mk("S1", issue="load", variables=(("df", 1, "100 rows"),)))
    assert saved.created_at is not None
    got = store.get("S1")
    assert got == saved
    assert got.status == "draft"


def test_save_draft_replaces_draft_in_place(store: StateStore, mk) -> None:
    store.save_draft(mk("S1", issue="first"))
    store.save_draft(mk("S2", issue="second"))
    store.save_draft(mk("S1", issue="first, revised"))
    assert [(s.id, s.issue) for s in store.drafts()] == [("S1", "first, revised"), ("S2", "second")]


def test_save_draft_refuses_non_draft(store: StateStore, mk) -> None:
    with pytest.raises(StoreError, match=r"save_draft S1: status is 'committed'"):
        store.save_draft(mk("S1", status="committed"))


def test_get_unknown_names_id(store: StateStore) -> None:
    with pytest.raises(StoreError, match="get S9: unknown state id"):
        store.get("S9")


def test_commit_by_id(store: StateStore, mk) -> None:
    store.save_draft(mk("S1", rels=(("init", None),)))
    committed = store.commit("S1")
    assert committed.status == "committed"
    assert committed.committed_at is not None
    assert store.get("S1") == committed
    assert store.drafts() == []
    assert store.committed() == [committed]


def test_commit_draft_object_saves_it(store: StateStore, mk) -> None:
    committed = store.commit(mk("S1", issue="direct"))
    assert store.get("S1") == committed
    assert committed.created_at is not None


def test_commit_twice_raises(store: StateStore, mk) -> None:
    store.commit(mk("S1"))
    with pytest.raises(StoreError, match="commit S1: state is already committed"):
        store.commit("S1")
    with pytest.raises(StoreError, match="commit S1: state is already committed"):
        store.commit(mk("S1"))


def test_commit_abandoned_raises(store: StateStore, mk) -> None:
    store.save_draft(mk("S1"))
    abandoned = store.abandon("S1")
    assert abandoned.status == "abandoned"
    assert store.get("S1").status == "abandoned"
    with pytest.raises(StoreError, match="commit S1: state is already abandoned"):
        store.commit("S1")


def test_commit_unknown_raises(store: StateStore) -> None:
    with pytest.raises(StoreError, match="commit S3: unknown state id"):
        store.commit("S3")


def test_commit_blank_issue_raises_and_keeps_draft(store: StateStore, mk) -> None:
    store.save_draft(mk("S1", issue=" "))
    with pytest.raises(StoreError, match="commit S1: invalid state"):
        store.commit("S1")
    assert store.get("S1").status == "draft"


def test_commit_requires_committed_targets(store: StateStore, mk) -> None:
    store.save_draft(mk("S1"))
    with pytest.raises(StoreError, match="commit S2: relation target S1 is draft"):
        store.commit(mk("S2", rels=(("progress", "S1"),)))
    # The failed commit rolled back its own draft save.
    with pytest.raises(StoreError, match="unknown state id"):
        store.get("S2")
    with pytest.raises(StoreError, match="relation target S9 is unknown"):
        store.commit(mk("S3", rels=(("branch", "S9"),)))


def test_save_draft_over_committed_or_abandoned_refused(store: StateStore, mk) -> None:
    store.commit(mk("S1", issue="kept"))
    store.save_draft(mk("S2"))
    store.abandon("S2")
    with pytest.raises(StoreError, match="save_draft S1: state is already committed"):
        store.save_draft(mk("S1", issue="overwrite"))
    with pytest.raises(StoreError, match="save_draft S2: state is already abandoned"):
        store.save_draft(mk("S2"))
    assert store.get("S1").issue == "kept"


def test_abandon_only_drafts(store: StateStore, mk) -> None:
    store.commit(mk("S1"))
    with pytest.raises(StoreError, match="abandon S1: state is committed"):
        store.abandon("S1")
    with pytest.raises(StoreError, match="abandon S5: unknown state id"):
        store.abandon("S5")


def test_committed_in_commit_order(store: StateStore, mk) -> None:
    for sid in ("S1", "S2", "S3"):
        store.save_draft(mk(sid))
    store.commit("S3")
    store.commit("S1")
    assert [s.id for s in store.committed()] == ["S3", "S1"]
    assert [s.id for s in store.drafts()] == ["S2"]


def test_index(store: StateStore, mk) -> None:
    store.commit(
        mk("S1", issue="load", rels=(("init", None),), variables=(("df", 1, "x"),), turn=0)
    )
    store.commit(mk("S2", issue="margin", rels=(("progress", "S1"),), variables=(("m", 2, "y"),)))
    store.save_draft(mk("S3", issue="not yet"))
    assert store.index() == [
        StateIndexEntry(id="S1", issue="load", variables=("df@v1",), relations=("init",), turn=0),
        StateIndexEntry(id="S2", issue="margin", variables=("m@v2",), relations=("progress→S1",)),
    ]


def test_persistence_across_reopen(tmp_path: Path, mk) -> None:
    path = tmp_path / "run.sqlite"
    with StateStore(path) as first:
        first.next_state_id()
        committed = first.commit(mk("S1", variables=(("x", 1, "1"),), conclusions=("c",)))
        first.save_draft(mk("S2", rels=(("progress", "S1"),)))
    with StateStore(str(path)) as second:
        assert second.committed() == [committed]
        assert [s.id for s in second.drafts()] == ["S2"]
        assert second.next_state_id() == "S3"
        second.commit("S2")
        assert second.upstream("S2") == ["S1"]
        with pytest.raises(StoreError, match="already committed"):
            second.commit("S1")


def test_wal_and_foreign_keys_enabled(tmp_path: Path, store: StateStore) -> None:
    with StateStore(tmp_path / "w.sqlite") as on_disk:
        conn = on_disk._conn
        assert conn is not None
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute(
                "INSERT INTO relation_edges (state_id, type, related_state_id) "
                "VALUES ('S1', 'progress', 'S0')"
            )


def test_trigger_blocks_raw_update_and_delete_of_committed_rows(tmp_path: Path, mk) -> None:
    path = tmp_path / "t.sqlite"
    with StateStore(path) as s:
        s.commit(mk("S1", issue="original"))
        s.commit(mk("S2", rels=(("progress", "S1"),)))
        s.save_draft(mk("S3", issue="draft"))
    raw = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE states SET issue = 'tampered' WHERE id = 'S1'")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE states SET status = 'draft' WHERE id = 'S1'")
        with pytest.raises(sqlite3.IntegrityError, match="cannot be deleted"):
            raw.execute("DELETE FROM states WHERE id = 'S1'")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE relation_edges SET related_state_id = 'S2'")
        with pytest.raises(sqlite3.IntegrityError, match="cannot be deleted"):
            raw.execute("DELETE FROM relation_edges")
        # Drafts stay editable at the SQL level.
        raw.execute("UPDATE states SET issue = 'edited' WHERE id = 'S3'")
        raw.commit()
    finally:
        raw.close()
    with StateStore(path) as s:
        assert s.get("S1").issue == "original"
        assert s.get("S3").issue == "edited"


def test_schema_version_recorded_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    StateStore(path).close()
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    raw.execute("UPDATE schema_version SET version = 999")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match=f"schema version 999, expected {SCHEMA_VERSION}"):
        StateStore(path)


def test_open_non_database_file(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="open state store"):
        StateStore(path)


def test_closed_store_raises(mk) -> None:
    s = StateStore(":memory:")
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        s.get("S1")
    with pytest.raises(StoreError, match="closed"):
        s.save_draft(mk("S1"))


def test_concurrent_next_state_id_unique(store: StateStore) -> None:
    ids: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            sid = store.next_state_id()
            with lock:
                ids.append(sid)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ids, key=lambda s: int(s[1:])) == [f"S{i}" for i in range(1, 101)]
