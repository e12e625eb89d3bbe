"""The trained sequential recommenders behind one interface: SASRec and BERT4Rec (score matrices over all items)
and TIGER (generative retrieval of semantic IDs, top-k lists by constrained beam search). Each is fitted on the
training sequences with the validation targets choosing the epoch, then ranks every test user's next item under
the same protocol as the training-free methods."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from neurips26.seqrec_audit.methods import TRAINED
from neurips26.seqrec_audit.metrics import (
    history_mask,
    metrics_from_ranks,
    metrics_from_topk,
    ranks_in_chunks,
)
from neurips26.seqrec_audit.prepare import PreparedDataset

K = 10


@dataclass
class Fitted:
    """A fitted model with its per-epoch rows, and its test metrics with the seconds spent on each part."""

    model: object
    epochs: list[dict]
    metrics: dict[str, float]
    train_seconds: float
    inference_seconds: float


def model_config(cfg: dict, name: str, seed: int):
    """The config dataclass of model `name` from the scale's block of that name, seeded by scale seed + `seed`."""
    if name not in TRAINED:
        raise ValueError(f"unknown trained model {name!r}; choose from {TRAINED}")
    if name == "sasrec":
        from neurips26.seqrec_audit.sasrec import SASRecConfig as Config
    elif name == "bert4rec":
        from neurips26.seqrec_audit.bert4rec import BERT4RecConfig as Config
    else:
        from neurips26.seqrec_audit.tiger import TIGERConfig as Config
    block = {k: v for k, v in cfg[name].items() if k != "rqvae"}
    return replace(Config(**block), seed=cfg["seed"] + seed)


def rqvae_config(cfg: dict):
    from neurips26.seqrec_audit.semantic_ids import RQVAEConfig

    return replace(RQVAEConfig(**cfg["tiger"]["rqvae"]), seed=cfg["seed"])


def drop_history(lists: np.ndarray, histories, n_items: int, k: int) -> np.ndarray:
    """Each row's first k items that are not in that user's history, in order (-1 pads)."""
    lists = np.asarray(lists, dtype=np.int64)
    rows = np.arange(len(lists))
    lengths = np.array([len(h) for h in histories], dtype=np.int64)
    seen = np.unique(np.repeat(rows, lengths) * n_items + np.concatenate([np.asarray(h, np.int64) for h in histories]))
    keep = (lists >= 0) & ~np.isin(rows[:, None] * n_items + lists, seen)
    order = np.argsort(~keep, axis=1, kind="stable")  # kept items first, in their order
    out = np.take_along_axis(np.where(keep, lists, -1), order, axis=1)[:, :k]
    return np.pad(out, ((0, 0), (0, max(0, k - out.shape[1]))), constant_values=-1)


def fit_and_evaluate(
    name: str,
    ready: PreparedDataset,
    config,
    protocol: dict,
    log: Callable[[str], None] | None = None,
    device=None,
    semantic_ids: np.ndarray | None = None,
    settings=None,
) -> Fitted:
    """Train model `name` with `config` on `ready`'s training sequences (validation targets pick the epoch), then
    rank the test targets: Recall and NDCG at 1/5/10 under `protocol` (exclude_history, tie_break). TIGER needs
    the items' `semantic_ids` and returns top-k lists: with exclude_history its beam's history items are dropped
    before the top 10 are taken, and ties do not arise. ``device`` defaults to the job's
    (``loop.job_device()``, CUDA when the job has a GPU); ``settings`` (``loop.LoopSettings``) hold the
    training's checkpoint, from which a killed job resumes. One seed of :func:`fit_and_evaluate_seeds`."""
    return fit_and_evaluate_seeds(name, ready, [config], protocol, log, device, semantic_ids, settings)[0]


def fit_and_evaluate_seeds(
    name: str,
    ready: PreparedDataset,
    configs: list,
    protocol: dict,
    log: Callable[[str], None] | None = None,
    device=None,
    semantic_ids: np.ndarray | None = None,
    settings=None,
) -> list[Fitted]:
    """:func:`fit_and_evaluate` for several seeds of one model (``configs`` equal but for their seeds): SASRec and
    BERT4Rec train them together as one batched ensemble (:mod:`.seeds`), each seed's run its own; TIGER takes one
    seed. Each seed's ``train_seconds`` is its share of the batch's training time (the time divided by the
    number of seeds); its ``inference_seconds`` its own ranking of the test users."""
    split, n = ready.split, ready.n_items
    histories, targets = split.test_history, split.test_target
    start = time.perf_counter()
    if name == "tiger":
        from neurips26.seqrec_audit.tiger import recommend_tiger, train_tiger

        if len(configs) != 1:
            raise ValueError(f"TIGER trains one seed per job, got {len(configs)} seeds")
        (config,) = configs
        if semantic_ids is None:
            raise ValueError("TIGER needs the items' semantic IDs")
        model, epochs = train_tiger(
            split.train,
            semantic_ids,
            split.valid_history,
            split.valid_target,
            config,
            log=log,
            device=device,
            settings=settings,
        )
        train_seconds, start = time.perf_counter() - start, time.perf_counter()
        beam = max(config.beam, K)
        lists = recommend_tiger(model, semantic_ids, histories, k=beam, beam=beam)
        lists = drop_history(lists, histories, n, K) if protocol["exclude_history"] else lists[:, :K]
        values = metrics_from_topk(lists, targets)
        return [Fitted(model, epochs, values, train_seconds, time.perf_counter() - start)]
    if name == "sasrec":
        from neurips26.seqrec_audit.sasrec import score_sasrec as score
        from neurips26.seqrec_audit.sasrec import train_sasrec_seeds as train
    else:
        from neurips26.seqrec_audit.bert4rec import score_bert4rec as score
        from neurips26.seqrec_audit.bert4rec import train_bert4rec_seeds as train
    runs = train(
        split.train, n, split.valid_history, split.valid_target, configs, log=log, device=device, settings=settings
    )
    train_seconds = (time.perf_counter() - start) / len(configs)
    fitted = []
    for model, epochs in runs:
        start = time.perf_counter()

        def scores(chunk, model=model):  # with exclude_history, history items get -inf as in the baselines
            rows = score(model, chunk)
            if protocol["exclude_history"]:
                rows[history_mask(chunk, n)] = -np.inf
            return rows

        ranks = ranks_in_chunks(scores, histories, targets, n, protocol["exclude_history"], protocol["tie_break"])
        values = metrics_from_ranks(ranks)
        fitted.append(Fitted(model, epochs, values, train_seconds, time.perf_counter() - start))
    return fitted
