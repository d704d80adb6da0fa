"""The per-cell report the in-kernel runtime pass sends to the lineage graph.

It is the only thing that crosses from the kernel into the graph: the static
analysis of the cell as the kernel compiled it, plus what actually happened to
the namespace (which names were rebound, mutated in place, deleted), how far
execution got, and which globals the functions the cell used read.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from stateguard.lineage.static import CellAnalysis

#: MIME type under which the runtime pass publishes its report from the kernel.
REPORT_MIME = "application/vnd.stateguard.lineage+json"


class CellReport(BaseModel):
    """What one executed cell did to the namespace, as observed in the kernel."""

    model_config = ConfigDict(frozen=True)

    source: str
    analysis: CellAnalysis
    failed_statement: int | None = None
    """Index of the top-level statement that raised (statements after it never ran)."""
    rebound: dict[str, str] = {}
    """Names bound to a different object after the cell (incl. new names) -> value summary."""
    mutated: dict[str, str] = {}
    """Names still bound to the same object whose content changed -> value summary."""
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    """Names the cell wrote that still hold the same object or an equal immutable scalar."""
    function_globals: dict[str, tuple[str, ...]] = {}
    """For names the cell read that are functions/classes: globals their bodies read,
    transitively through the functions they call."""
    statement_globals: dict[int, dict[str, tuple[str, ...]]] = {}
    """For statements of a cell that called functions more than once: `function_globals`
    as that statement alone reached them (which blocks of the functions it ran)."""
    return_globals: dict[str, tuple[str, ...]] = {}
    """For functions in `function_globals` whose return value is known to depend on only some
    of those globals (not on one it only logs): those globals."""
    aliases: dict[str, tuple[str, ...]] = {}
    """For each changed name, other names sharing (part of) its object."""
    hook_seconds: float = 0.0
    """Time the runtime pass spent inside the kernel for this cell (both hooks)."""
    ran_blocks: tuple[int, ...] | None = None
    """Keys of the cell's guarded blocks that ran; None when not observed (every block
    then counts as run)."""
    paths: dict[str, tuple[tuple[str, ...], ...]] = {}
    """``"statement:access"`` -> the part paths that access reached on the live value
    (``[["['a']"]]`` for ``df.a``); accesses with a path but no entry reach the whole."""
    mutated_parts: dict[str, tuple[tuple[str, ...], ...]] = {}
    """For mutated names whose change is known part by part: the part paths changed
    (added and removed parts included). A mutated name absent here changed as a whole."""

    carried: dict[str, tuple[tuple[str, str], ...]] = {}
    """``"statement:access"`` of a frame-valued chain bound to a new name (``df2 =
    df.assign(..)``, a filtered copy, a merge) -> (source column part, bound column part)
    for each column that passed through unchanged, so each keeps its own lineage."""
    reframed: tuple[str, ...] = ()
    """Names rebound to a new frame holding the same rows, whose changed columns are in
    `mutated_parts` (``df = df.assign(z=..)`` adds a column, like ``df['z'] = ..``)."""
    restated: dict[str, tuple[str, ...]] = {}
    """Names in `rebound` that the cell did not read, bound to a new object holding the
    old one's value (``()``: ``df = pd.read_csv(..)`` again), or the same rows with only
    these columns different (``("['net']",)``: a re-read dropping a column added since).
    A graph that tracks values (`LineageGraph.by_value`) records them as unchanged, or as
    a change of those columns; one that tracks bindings, as a rebinding."""
    reseeded: tuple[str, ...] = ()
    """Modules whose random-generator submodule was reseeded (``np.random.seed(..)``): the
    submodule's part changed; the module as a whole, read by ``np.mean``, did not."""
    instances: dict[str, tuple[str, tuple[tuple[str, tuple[str, ...], bool], ...]]] = {}
    """``"statement:access"`` of a bind ``foo = Foo(..)`` -> (the class's name, and per
    attribute its ``__init__`` set: the globals its value read and whether it read a
    parameter). Each such attribute of the instance has its own lineage."""
    user_objects: tuple[str, ...] = ()
    """Names rebound to an instance of a class defined in the session: a method called on
    it later in the cell may change it."""
    token: str = ""
    """The session's secret, given to the runtime pass at install: a report without it
    was not made by the pass this session installed."""
    seq: int = 0
    """1 for the first tracked cell after install, then one more per report: a missing,
    repeated or replayed report shows as a gap."""
    gap_rebound: dict[str, str] = {}
    """Names rebound (or new) since the last report, by a cell that sent none (its hooks
    were removed or disabled): found when the pass was armed again."""
    gap_mutated: dict[str, str] = {}
    """Names changed in place since the last report, by such a cell."""
    gap_deleted: tuple[str, ...] = ()
    unobserved: str | None = None
    """Set when the pass saw the cell run but not its code (its parse hook was replaced):
    the cell is unverified."""

    def ran(self, guard: int | None) -> bool:
        """Whether code under `guard` ran in this cell."""
        return guard is None or self.ran_blocks is None or guard in self.ran_blocks

    @property
    def executed_statements(self) -> int:
        """How many top-level statements started executing."""
        n = len(self.analysis.statements)
        return n if self.failed_statement is None else min(self.failed_statement + 1, n)
