"""Benchmark reports: ``metrics.json`` per run, paired comparison, plots and an HTML page.

``metrics.json`` holds every key of `metrics.METRIC_KEYS` at top level (None where
undefined), plus ``injections`` (planted faults: total, effective, caught),
``skipped`` (which turns were skipped and why), ``turns_lost`` / ``lost_share`` /
``skipped_by_reason`` (turns not scored, skipped or excluded by the judge, counted by
`losses.loss_category`), ``tasks_rejected`` / ``rejections``
(tasks the loader rejected, with file, cell/turn and field), ``tasks_failed`` /
``failures`` (tasks whose run raised), ``turns_undecided`` (the deterministic judge
could not tell, no LLM judge decided), ``turns_llm_judged`` and ``judge_unparseable``
(LLM judge replies without a score), and ``run`` (the run's settings).

A comparison of run A with run B adds ``comparison.json``: the paired cluster
bootstrap over tasks (`bootstrap.paired_bootstrap`, 10,000 resamples, seeded) of
B − A for turn and task-macro accuracy, with both runs' headline metrics.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from stateguard.bench.bootstrap import paired_bootstrap
from stateguard.bench.losses import Losses, losses
from stateguard.bench.metrics import compute_metrics, position
from stateguard.bench.records import RunStore, TurnResult

HEADLINE = (
    "turn_accuracy",
    "task_macro_accuracy",
    "dcr",
    "fault_recall",
    "false_alarm_rate",
    "join_false_alarm_rate",
    "repairs_fixed",
    "llm_calls_per_turn",
    "turns_total",
    "turns_skipped",
    "turns_undecided",
    "tasks_rejected",
)
PAIRED_METRICS = ("turn_accuracy", "task_macro_accuracy")


def _injection_summary(results: list[TurnResult]) -> dict[str, Any]:
    injected = [r for r in results if r.injected and not r.skipped]
    effective = [r for r in injected if r.fault_effective]
    kinds = sorted({r.injection_kind for r in injected if r.injection_kind})
    return {
        "kinds": kinds,
        "total": len(injected),
        "effective": len(effective),
        "caught": sum(r.flagged for r in injected),
        "caught_effective": sum(r.flagged for r in effective),
        "recall_effective": (
            sum(r.flagged for r in effective) / len(effective) if effective else None
        ),
        "fixed_by_repair": sum(r.fixed_by_repair for r in injected),
    }


def run_metrics(run_dir: Path | str) -> dict[str, Any]:
    """All metrics of one run (see the module docstring)."""
    store = RunStore(run_dir)
    config = store.config()
    results = store.results()
    metrics = compute_metrics(r.as_record() for r in results)
    metrics["injections"] = _injection_summary(results)
    metrics["manager_accepted_rate"] = sum(r.accepted for r in results if not r.skipped) / max(
        1, metrics["turns_total"] - metrics["turns_skipped"]
    )
    metrics["skipped"] = [
        {"task_id": r.task_id, "turn_id": r.turn_id, "reason": r.skipped_reason}
        for r in sorted(results, key=lambda r: (r.task_id, r.turn_id))
        if r.skipped
    ]
    rejections = store.rejections()
    metrics["tasks_rejected"] = len(rejections)
    metrics["rejections"] = rejections
    failed = {e["task_id"] for e in store.errors()}
    metrics["tasks_failed"] = len(failed)
    metrics["failures"] = [
        {"task_id": r.task_id, "turn_id": r.turn_id, "reason": r.skipped_reason}
        for r in sorted(results, key=lambda r: (r.task_id, r.turn_id))
        if r.task_id in failed and r.skipped and (r.skipped_reason or "").startswith("runner")
    ][:200]
    metrics["turns_undecided"] = sum(1 for r in results if r.undecided and not r.skipped)
    metrics["turns_llm_judged"] = sum(1 for r in results if r.judged_by == "llm")
    metrics["judge_unparseable"] = sum(
        1 for r in results if r.judged_by == "llm" and r.correct is None and not r.skipped
    )
    lost = losses(results, tasks_failed=len(failed), tasks_rejected=len(rejections))
    metrics["turns_scored"] = lost.turns_scored
    metrics["turns_lost"] = lost.turns_lost
    metrics["skipped_by_reason"] = lost.skipped_by_reason
    metrics["lost_share"] = lost.lost_share
    metrics["run"] = {"dir": str(Path(run_dir)), **config.model_dump(mode="json")}
    return metrics


def run_losses(metrics: dict[str, Any]) -> Losses:
    """The lost-work figures of a run's metrics (`run_metrics`)."""
    return Losses(
        tasks_total=metrics.get("tasks_total") or 0,
        tasks_failed=metrics.get("tasks_failed") or 0,
        tasks_rejected=metrics.get("tasks_rejected") or 0,
        turns_total=metrics.get("turns_total") or 0,
        turns_scored=metrics.get("turns_scored") or 0,
        turns_undecided=metrics.get("turns_undecided") or 0,
        turns_lost=metrics.get("turns_lost") or 0,
        skipped_by_reason=metrics.get("skipped_by_reason") or {},
    )


def write_metrics(run_dir: Path | str) -> dict[str, Any]:
    """Compute and write ``<run_dir>/metrics.json``; returns the metrics."""
    metrics = run_metrics(run_dir)
    (Path(run_dir) / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    return metrics


def compare_runs(
    run_a: Path | str, run_b: Path | str, *, n_resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Paired bootstrap of B − A over tasks for the accuracy metrics."""
    a, b = RunStore(run_a).records(), RunStore(run_b).records()
    paired: dict[str, Any] = {}
    for metric in PAIRED_METRICS:
        try:
            res = paired_bootstrap(a, b, metric=metric, n_resamples=n_resamples, seed=seed)
            paired[metric] = res.model_dump()
        except ValueError as exc:
            paired[metric] = {"error": str(exc)}
    ma, mb = run_metrics(run_a), run_metrics(run_b)
    return {
        "a": str(run_a),
        "b": str(run_b),
        "difference": "b - a",
        "n_resamples": n_resamples,
        "seed": seed,
        "paired": paired,
        "metrics_a": {k: ma[k] for k in HEADLINE},
        "metrics_b": {k: mb[k] for k in HEADLINE},
        "injections_a": ma["injections"],
        "injections_b": mb["injections"],
    }


# -- plots ---------------------------------------------------------------------


def _position_curve(
    results: list[TurnResult], bins: int = 10
) -> tuple[list[float], list[float | None]]:
    sums = [0.0] * bins
    counts = [0] * bins
    for r in results:
        rec = r.as_record()
        pos = position(rec)
        if pos is None or not rec.scored:
            continue
        i = min(int(pos * bins), bins - 1)
        sums[i] += float(bool(rec.correct))
        counts[i] += 1
    xs = [(i + 0.5) / bins for i in range(bins)]
    return xs, [s / c if c else None for s, c in zip(sums, counts, strict=True)]


def write_plots(
    out_dir: Path, runs: dict[str, Path], comparison: dict[str, Any] | None
) -> dict[str, Path]:
    """PNG plots: accuracy by position, DCR, and (with two runs) the paired difference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for label, run in runs.items():
        xs, ys = _position_curve(RunStore(run).results())
        pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xlabel("normalized turn position (deciles)")
    ax.set_ylabel("turn accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.legend()
    ax.set_title("Accuracy by turn position")
    fig.tight_layout()
    paths["position"] = out_dir / "accuracy_by_position.png"
    fig.savefig(paths["position"], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    width = 0.8 / max(1, len(runs))
    for n, (label, run) in enumerate(runs.items()):
        d = run_metrics(run)["dcr_detail"]
        vals = [d["p_wrong_given_dep_wrong"], d["p_wrong_given_deps_right"]]
        xs = [k + n * width for k in range(2)]
        ax.bar(xs, [v if v is not None else 0 for v in vals], width=width, label=label)
        dcr = "n/a" if d["value"] is None else f"{d['value']:+.2f}"
        ax.text(xs[0], (vals[0] or 0) + 0.02, f"DCR {dcr}", fontsize=8)
    ax.set_xticks([k + width * (len(runs) - 1) / 2 for k in range(2)])
    ax.set_xticklabels(["P(wrong | a dependency wrong)", "P(wrong | dependencies right)"])
    ax.set_ylim(0, 1.1)
    ax.legend()
    ax.set_title("Dependency-conditioned error")
    fig.tight_layout()
    paths["dcr"] = out_dir / "dcr.png"
    fig.savefig(paths["dcr"], dpi=110)
    plt.close(fig)

    if comparison is not None:
        fig, ax = plt.subplots(figsize=(6, 2.8))
        names = [m for m in PAIRED_METRICS if "mean_diff" in comparison["paired"][m]]
        for y, m in enumerate(names):
            p = comparison["paired"][m]
            ax.errorbar(
                p["mean_diff"],
                y,
                xerr=[[p["mean_diff"] - p["ci_low"]], [p["ci_high"] - p["mean_diff"]]],
                fmt="o",
                capsize=4,
            )
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names)
        ax.set_xlabel("B − A (95 % paired bootstrap interval)")
        ax.set_title("Paired difference")
        fig.tight_layout()
        paths["paired"] = out_dir / "paired_difference.png"
        fig.savefig(paths["paired"], dpi=110)
        plt.close(fig)
    return paths


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def write_html(
    out: Path, runs: dict[str, Path], comparison: dict[str, Any] | None, plots: dict[str, Path]
) -> Path:
    """A self-contained page: headline table, comparison and the embedded plots."""
    metrics = {label: run_metrics(run) for label, run in runs.items()}
    rows = "".join(
        f"<tr><th>{k}</th>" + "".join(f"<td>{_fmt(m[k])}</td>" for m in metrics.values()) + "</tr>"
        for k in HEADLINE
    )
    head = "".join(
        f"<th>{html.escape(label)}<br><small>{html.escape(str(runs[label]))}</small></th>"
        for label in runs
    )
    parts = [
        "<!doctype html><meta charset='utf-8'><title>stateguard benchmark report</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}</style>",
        "<h1>Benchmark report</h1>",
        f"<table><tr><th></th>{head}</tr>{rows}</table>",
    ]
    if comparison is not None:
        items = "".join(
            f"<li>{m}: {_fmt(p.get('mean_diff'))} "
            f"[{_fmt(p.get('ci_low'))}, {_fmt(p.get('ci_high'))}] "
            f"over {p.get('n_tasks')} tasks</li>"
            if "mean_diff" in p
            else f"<li>{m}: {html.escape(p.get('error', ''))}</li>"
            for m, p in comparison["paired"].items()
        )
        parts.append(
            f"<h2>Paired difference (B − A, 95 %, {comparison['n_resamples']} resamples)</h2>"
            f"<ul>{items}</ul>"
        )
    for name, path in plots.items():
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(
            f"<h2>{html.escape(name)}</h2><img alt='{name}' src='data:image/png;base64,{data}'>"
        )
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


def build_report(
    run_a: Path | str,
    run_b: Path | str | None = None,
    out_dir: Path | str | None = None,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    """Write metrics (per run), the comparison, plots and ``report.html``; return a summary."""
    run_a = Path(run_a)
    out = Path(out_dir) if out_dir else run_a / "report"
    out.mkdir(parents=True, exist_ok=True)
    runs = {"A": run_a} if run_b is None else {"A": run_a, "B": Path(run_b)}
    metrics = {label: write_metrics(run) for label, run in runs.items()}
    comparison = None
    if run_b is not None:
        comparison = compare_runs(run_a, run_b, n_resamples=n_resamples, seed=seed)
        (out / "comparison.json").write_text(json.dumps(comparison, indent=2), encoding="utf-8")
    plots = write_plots(out, runs, comparison)
    page = write_html(out / "report.html", runs, comparison, plots)
    return {"metrics": metrics, "comparison": comparison, "plots": plots, "html": page, "out": out}
