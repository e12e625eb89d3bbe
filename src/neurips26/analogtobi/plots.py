"""Figures of paper 02 (matplotlib): the ablation's rates per configuration and decoding with the seed spread,
example generated circuits drawn as bipartite graphs, and the training curves."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .generate import graph_of  # noqa: E402
from .netlist import Circuit  # noqa: E402

__all__ = ["ablation", "examples", "pick_examples", "training_curves"]

_SHOWN = [
    ("validity", "validity"),
    ("novelty", "valid & novel"),
    ("novel_of_valid", "novel of valid"),
    ("memorisation", "10-gram memorised"),
    ("type_accuracy", "type accuracy"),
    ("electrical", "ngspice .op"),
]


def ablation(summary: pd.DataFrame, rows: pd.DataFrame):
    """Grouped bars: one group per rate, one bar per (configuration, decoding), the mean over seeds, each seed a dot."""
    fig, ax = plt.subplots(figsize=(11, 4.5))
    arms = list(summary[["config", "decoding"]].itertuples(index=False, name=None))
    width = 0.8 / max(len(arms), 1)
    for k, (config, decoding) in enumerate(arms):
        mine = summary[(summary["config"] == config) & (summary["decoding"] == decoding)].iloc[0]
        seeds = rows[(rows["config"] == config) & (rows["decoding"] == decoding)]
        x = np.arange(len(_SHOWN)) + (k - (len(arms) - 1) / 2) * width
        ax.bar(x, [mine[r] for r, _ in _SHOWN], width, label=f"{config} {decoding}")
        for xi, (rate, _) in zip(x, _SHOWN):
            ax.scatter(np.full(len(seeds), xi), seeds[rate], color="black", s=6, zorder=3)
            if not np.isfinite(mine[rate]):  # no valid walk to measure it on
                ax.text(xi, 0.01, "n/a", rotation=90, ha="center", va="bottom", fontsize=6)
    ax.set_xticks(np.arange(len(_SHOWN)), [label for _, label in _SHOWN])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("rate (bars: mean over seeds; dots: seeds)")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Ablation: representation x conditioning x renaming x decoding")
    fig.tight_layout()
    return fig


def pick_examples(samples: pd.DataFrame, metrics: pd.DataFrame, config: str, decoding: str, n: int = 6):
    """Up to ``n`` valid bipartite walks, one per requested type, from ``config`` and ``decoding`` first, then from
    the other bipartite sets; (title naming the set, novelty and ngspice outcome, tokens)."""
    table = pd.concat([samples.reset_index(drop=True), metrics[["valid", "novel", "spice"]].reset_index(drop=True)],
                      axis=1)  # fmt: skip
    table = table[table["valid"] & (table["config"] != "random") & table["config"].str.startswith("bipart")]
    rank = 4 * (table["config"] != config) + 2 * (table["decoding"] != decoding) + (~table["novel"].astype(bool))
    table = table.assign(rank=rank).sort_values(["rank", "seed", "index"], kind="stable")
    shown, types = [], set()
    for r in table.itertuples():
        if len(shown) == n:
            break
        if r.type not in types:
            types.add(r.type)
            novelty = "novel" if r.novel else "in the training set"
            shown.append((f"{r.type}: {r.config} {r.decoding} s{r.seed} ({novelty}; ngspice {r.spice})",
                          r.tokens.split()))  # fmt: skip
    return shown


def examples(circuits: list[tuple[str, Circuit]], columns: int = 3):
    """Generated circuits as bipartite graphs: devices (squares, by family) and nets (circles; rails and ports
    named), edges labelled by their pins."""
    import networkx as nx

    n = max(len(circuits), 1)
    rows = (n + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4.2 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    if not circuits:
        axes[0, 0].text(0.5, 0.5, "no bipartite set generated a valid circuit", ha="center", va="center")
    for ax, (title, circuit) in zip(axes.ravel(), circuits):
        g = graph_of(circuit)
        pos = nx.spring_layout(g, seed=0)
        devices = [v for v in g if g.nodes[v]["label"] not in ("NET",) and not _is_net(v)]
        nets = [v for v in g if _is_net(v)]
        nx.draw_networkx_nodes(g, pos, nodelist=devices, node_shape="s", node_color="tab:orange", node_size=260, ax=ax)
        nx.draw_networkx_nodes(g, pos, nodelist=nets, node_color="tab:blue", node_size=160, alpha=0.6, ax=ax)
        nx.draw_networkx_edges(g, pos, ax=ax, alpha=0.5)
        nx.draw_networkx_labels(g, pos, font_size=6, ax=ax)
        nx.draw_networkx_edge_labels(g, pos, {e: g.edges[e]["label"] for e in g.edges}, font_size=5, ax=ax)
        ax.set_title(title, fontsize=8)
    fig.tight_layout()
    return fig


def _is_net(node: str) -> bool:
    from .tokens import split_device

    return split_device(node) is None


def training_curves(training: pd.DataFrame):
    """Training and held-out loss per configuration and seed."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for (config, seed), group in training.groupby(["config", "seed"], sort=False):
        colour = f"C{list(training['config'].unique()).index(config)}"
        ax.plot(group["step"], group["loss"], color=colour, alpha=0.3, lw=0.8)
        held = group.dropna(subset=["val_loss"])
        ax.plot(held["step"], held["val_loss"], "o-", color=colour, ms=3,
                label=f"{config} (held out)" if seed == training["seed"].min() else None)  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("next-token cross-entropy (nats)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
