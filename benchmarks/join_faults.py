"""Silent join faults planted into DSEval sessions, and how many the join guard flags.

For every session of a DSEval suite whose reference code merges (`pd.merge`,
`DataFrame.merge`), the reference cells run in order under the join guard, once
clean and once per planted fault (key dropped, how changed to inner, key format
changed, a duplicated key), in a temporary copy of the session's inputs. Prints
fault recall and the false-alarm rate on the clean merges (both as JSON with
--json), per fault kind, without any model call. An alarm is a finding
`stateguard.audit.joinpolicy` treats as evidence against the result (what the
deterministic manager repairs on); a note is shown to the agent only.

    python benchmarks/join_faults.py ../shared/benchmarks/dseval/exercise [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from stateguard.audit.joinfaults import evaluate
from stateguard.bench.loaders.dseval import load_dseval_suite, stage_inputs


def main() -> None:
    """Load the suite, evaluate, print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tasks = [t for t in load_dseval_suite(args.suite) if t.skipped_reason is None]
    with tempfile.TemporaryDirectory() as tmp:
        sessions: dict[str, list[str]] = {}
        questions: dict[str, list[str | None]] = {}
        workdirs: dict[str, Path] = {}
        for task in tasks:
            cells: list[str] = []
            asked: list[str | None] = []
            for turn in task.turns:
                if turn.meta.get("setup_code"):
                    cells.append(turn.meta["setup_code"])
                    asked.append(None)
                cells.append(turn.reference_code or "")
                asked.append(turn.question)
            if not any(".merge(" in c for c in cells):
                continue
            wd = Path(tmp) / task.task_id
            wd.mkdir()
            stage_inputs(task, wd)
            sessions[task.task_id] = cells
            questions[task.task_id] = asked
            workdirs[task.task_id] = wd
        result = evaluate(sessions, workdirs, questions)
    if args.json:
        print(result.model_dump_json(exclude={"outcomes"}))
        return
    print(f"sessions with merges: {result.sessions}")
    print(
        f"clean merges: {result.clean_merges}, false alarms: {result.false_alarms} "
        f"({result.false_alarm_rate:.1%}; error severity only "
        f"{result.errors_only_false_alarm_rate:.1%}); with some finding (alarm or note): "
        f"{result.noted_clean}"
    )
    print(
        f"planted faults: {result.faults} (+{result.without_effect} without effect), "
        f"flagged: {result.flagged} ({result.fault_recall:.1%}; error severity or "
        f"exception only {result.errors_only_fault_recall:.1%})"
    )
    for kind, r in result.recall_by_kind.items():
        print(f"  {kind:<17} {r:.1%}")
    for o in result.outcomes:
        what = o.fault or "clean"
        marked = [k if k in o.alarms else f"{k} (note)" for k in o.kinds]
        said = ", ".join(marked) or (f"raised: {o.raised[:60]}" if o.raised else "-")
        if o.fault is not None:
            said += f"  [new alarms: {', '.join(o.new_alarms) or '-'}]"
        print(f"  {o.session} cell {o.cell} {what:<17} {said}")
    print(
        json.dumps(
            {"fault_recall": result.fault_recall, "false_alarm_rate": result.false_alarm_rate}
        )
    )


if __name__ == "__main__":
    main()
