"""Paper-scale data: FineWeb-Edu sample-10BT pre-tokenized with each model's tokenizer, as the reference's
``data/cached_finewebedu10B-qwen3.py`` downloads it from the Hugging Face dataset ``timlautk/finewebedu10B-qwen3``
(``dataset_val_000000.bin`` and ``dataset_train_000001.bin`` ... ``000099.bin``, 100M tokens each, with the
256-word header that :func:`neurips26.common.token_files.read_tokens` reads).

The shards land in resources/symm_optim/<corpus>/; their url, and why no shard is pinned yet, are in the registry
of pinned sources, config/sources.yaml (folder symm_optim/fineweb_edu_qwen3). The dataset publishes no checksums,
and no revision or LFS hash could be read offline when this was written: asking for a shard stops the run before
any job, saying how to unblock it (pin a revision and the shards' sha256 there, or put shards obtained with the
reference's script in the folder the rules read).
"""

from __future__ import annotations

__all__ = ["CORPORA", "SHARD_BYTES", "shard_files"]

CORPORA = ("fineweb_edu_qwen3",)  # downloaded corpora, each a folder of resources/symm_optim/
SHARD_BYTES = 100_000_000 * 4  # a shard's tokens (100M, uint32 for Qwen3's 151,936 ids), as a job holds them


def shard_files(corpus: str, train_shards: int) -> dict[str, list[str]]:
    """File names of the validation shard and the first ``train_shards`` training shards."""
    if corpus not in CORPORA:
        raise ValueError(f"unknown downloaded corpus {corpus!r}, expected one of {sorted(CORPORA)}")
    if not 1 <= train_shards <= 99:
        raise ValueError(f"train_shards must lie in [1, 99], got {train_shards}")
    return {
        "val": ["dataset_val_000000.bin"],
        "train": [f"dataset_train_{i:06d}.bin" for i in range(1, train_shards + 1)],
    }
