"""The plots of docs/benchmarks/, from the JSON results under benchmarks/results/.

    .venv/bin/python -m benchmarks.plots

Each plot is drawn only when its results file exists; PNGs go to docs/benchmarks/."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
RESULTS = REPO_DIR / "benchmarks" / "results"
OUT = REPO_DIR / "docs" / "benchmarks"
KS = ("5", "10", "25", "50")


def _load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def _pyplot():
    import matplotlib  # a benchmark-only package (requirements/bench.txt): loaded when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def locomo_recall() -> None:
    plt = _pyplot()
    runs = {split: _load(f"locomo_{split}.json") for split in ("dev", "eval")}
    if not any(runs.values()):
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, corpus in zip(axes, ("turns", "observations"), strict=True):
        paper = None
        for split, run in runs.items():
            if not run:
                continue
            paper = run["paper_dragon"]["overall"][corpus]["overall"]
            for mode, style in (("hybrid", "-"), ("text", "--"), ("semantic", ":")):
                key = f"{corpus}/{mode}"
                if key in run["recall"]:
                    values = [run["recall"][key]["overall"][k] for k in KS]
                    ax.plot([int(k) for k in KS], values, style, marker="o", label=f"{split} {mode}")
            if corpus == "observations" and run.get("mem0"):
                values = [run["mem0"]["recall"]["overall"][k] for k in KS]
                ax.plot([int(k) for k in KS], values, "-.", marker="s", label=f"{split} mem0 2.2.1")
        if paper:
            ax.plot([int(k) for k in KS], [paper[k] for k in KS], "k-", marker="^", lw=2, label="paper (DRAGON)")
        ax.set_title(f"LoCoMo {corpus}: recall@k")
        ax.set_xticks([5, 10, 25, 50], ["5", "10", "25", "50"])
        ax.set_xlabel("k")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("recall (%)")
    fig.tight_layout()
    fig.savefig(OUT / "locomo_recall.png", dpi=110)
    plt.close(fig)


def search_latency() -> None:
    plt = _pyplot()
    run = _load("search_latency.json")
    if not run:
        return
    scales = sorted(run["scales"], key=int)
    x = [int(s) for s in scales]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for scope, color in (("per_user", "tab:blue"), ("agent_wide", "tab:orange")):
        for concurrency, style in ((1, "-"), (8, "--")):
            cells = [run["scales"][s][f"{scope}_c{concurrency}"] for s in scales]
            axes[0].plot(
                x, [c["p50_ms"] for c in cells], style, color=color, marker="o", label=f"{scope} c{concurrency} p50"
            )
            axes[0].plot(
                x,
                [c["p95_ms"] for c in cells],
                style,
                color=color,
                marker="x",
                alpha=0.6,
                label=f"{scope} c{concurrency} p95",
            )
    axes[0].axhline(20, color="red", lw=1, ls=":", label="goal: per-user p95 at c1")
    axes[0].set_xscale("log")
    axes[0].minorticks_off()
    axes[0].set_xticks(x, [f"{v:,}" for v in x])
    axes[0].set_xlabel("facts in the store")
    axes[0].set_ylabel("ms per search (HTTP, query embedding included)")
    axes[0].set_title("Fact search latency")
    axes[0].legend(fontsize=7)
    axes[0].grid(alpha=0.3)
    for s in scales:
        vector = run["scales"][s]["agent_wide_vector_recall"]
        recall = vector["recall_at_10_by_ef_search"]
        efs = sorted(recall, key=int)
        axes[1].plot(
            [int(e) for e in efs], [recall[e] for e in efs], marker="o", label=f"{int(s):,} facts ({vector['path']})"
        )
    axes[1].axhline(0.95, color="red", lw=1, ls=":", label="goal 0.95")
    axes[1].set_xlabel("hnsw.ef_search")
    axes[1].set_ylabel("recall@10 vs exact")
    axes[1].set_title("Agent-wide vector path recall")
    axes[1].legend(fontsize=7)
    axes[1].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "search_latency.png", dpi=110)
    plt.close(fig)


def main() -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    locomo_recall()
    search_latency()
    print(f"plots in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
