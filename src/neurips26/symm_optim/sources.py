"""Paper-scale data: FineWeb-Edu sample-10BT pre-tokenized with each model's tokenizer, as the reference's
``data/cached_finewebedu10B-qwen3.py`` downloads it from the Hugging Face dataset ``timlautk/finewebedu10B-qwen3``
(``dataset_val_000000.bin`` and ``dataset_train_000001.bin`` ... ``000099.bin``, 100M tokens each, with the
256-word header that :func:`neurips26.common.token_files.read_tokens` reads).

The dataset publishes no checksums, and no revision or LFS hash could be read offline when this was written, so
no shard is pinned yet: asking for one stops the run before any job, saying how to unblock it (pin a revision and
the shards' sha256 here, or put shards obtained with the reference's script in the folder the rules read).
"""

from __future__ import annotations

__all__ = ["CORPORA", "sha256", "shard_files", "url"]

CORPORA = {
    "fineweb_edu_qwen3": {"repo": "timlautk/finewebedu10B-qwen3", "revision": None, "sha256": {}},
}


def _corpus(corpus: str) -> dict:
    if corpus not in CORPORA:
        raise ValueError(f"unknown downloaded corpus {corpus!r}, expected one of {sorted(CORPORA)}")
    return CORPORA[corpus]


def shard_files(corpus: str, train_shards: int) -> dict[str, list[str]]:
    """File names of the validation shard and the first ``train_shards`` training shards."""
    _corpus(corpus)
    if not 1 <= train_shards <= 99:
        raise ValueError(f"train_shards must lie in [1, 99], got {train_shards}")
    return {
        "val": ["dataset_val_000000.bin"],
        "train": [f"dataset_train_{i:06d}.bin" for i in range(1, train_shards + 1)],
    }


def url(corpus: str, file: str) -> str:
    entry = _corpus(corpus)
    return f"https://huggingface.co/datasets/{entry['repo']}/resolve/{entry['revision'] or 'main'}/{file}"


def sha256(corpus: str, file: str) -> str:
    """``sha256:<hex>`` of a pinned shard; ValueError explaining how to unblock when none is pinned."""
    entry = _corpus(corpus)
    digest = entry["sha256"].get(file)
    if entry["revision"] is None or digest is None:
        raise ValueError(
            f"{file} of the Hugging Face dataset {entry['repo']} has no pinned revision and sha256 in "
            f"neurips26.symm_optim.sources (the dataset publishes none and none could be read offline). To unblock, "
            f"either pin a revision and each shard's LFS sha256 there, or download the shards with the reference's "
            f"data/cached_finewebedu10B-qwen3.py and place them in resources/symm_optim/{corpus}/"
        )
    return f"sha256:{digest}"
