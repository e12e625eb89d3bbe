"""What one training run reads: its token stream (the clean corpus, or the clean corpus noised as it is read with the
placement of the run's seed), its noisy probe (fixed windows of that stream with their noise mask, for the
diagnostics of :mod:`.training`) and its noise vocabulary (whose embedding rows are compared with the rest).

A clean run has no noise positions; its probe's mask marks the positions holding an id of the reference setting's
noise vocabulary (the ids the noise would use), so that its diagnostics measure the same quantity without noise:
the null the noisy runs are compared with.
"""

from __future__ import annotations

import numpy as np

from .noise import CLEAN, NoisedStream, noise_vocabulary, parse_setting, placement_seed

__all__ = ["MATERIALIZE_TOKENS", "RunStream", "run_stream"]

MATERIALIZE_TOKENS = 1 << 26  # streams up to 64M tokens are noised once, whole (the same tokens, tested)


class RunStream:
    """A run's training stream (``tokens``: anything sliceable; ``read(a, b)`` gives tokens and noise mask) and its
    noise vocabulary ``noise_ids``."""

    def __init__(self, tokens, read, noise_ids: np.ndarray):
        self.tokens, self.read, self.noise_ids = tokens, read, noise_ids

    def probe(self, windows: int, seq_len: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, mask), (windows, seq_len) each: fixed windows of the stream at starts drawn by ``seed``."""
        rng = np.random.default_rng(seed)
        starts = rng.integers(0, len(self.tokens) - seq_len, size=windows)
        pairs = [self.read(int(a), int(a) + seq_len) for a in starts]
        return np.stack([t for t, _ in pairs]).astype(np.int64), np.stack([m for _, m in pairs])


def run_stream(clean, setting: str, noise: dict, vocab_size: int, seed: int) -> RunStream:
    """The stream a run of ``setting`` and training ``seed`` reads. ``noise``: the injection's ``seed``,
    ``allow_special``, ``special_ids``, ``eot_id`` and ``reference_setting`` (whose vocabulary a clean run's probe
    marks)."""
    special, allow = tuple(noise["special_ids"]), noise["allow_special"]
    if setting == CLEAN:
        ids = noise_vocabulary(vocab_size, parse_setting(noise["reference_setting"]).vocab, special, allow)

        def read(a, b):
            tokens = np.asarray(clean[a:b])
            return tokens, np.isin(tokens, ids)

        return RunStream(clean, read, ids)
    parsed = parse_setting(setting)
    ids = noise_vocabulary(vocab_size, parsed.vocab, special, allow)
    stream = NoisedStream(clean, parsed, ids, placement_seed(noise["seed"], seed), eot=noise["eot_id"])
    if len(stream) > MATERIALIZE_TOKENS:
        return RunStream(stream, stream.read, ids)
    tokens, mask = stream.materialize()
    return RunStream(tokens, lambda a, b: (tokens[a:b], mask[a:b]), ids)
