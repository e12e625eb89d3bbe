"""What one training run reads: its token stream (the clean corpus, or the clean corpus noised as it is read with the
placement of the run's seed) and its noise vocabulary; and the noisy probe of the diagnostics of :mod:`.training`
(:func:`probe_stream`): the clean validation stream noised by the reference setting, one placement for every run, from
which fixed windows with their noise mask are read.

Every run, clean, noisy or at a raised learning rate, is measured on the same probe windows and the same noise ids
(the reference setting's vocabulary), so that the noise diagnostics differ between runs only by what the runs
learned, never by their inputs (issue 40's review: a clean run's own probe marked ids 1-5, rare in clean text, where a
noisy run's marked its inserted noise, so the diagnostics encoded the class). The probe's windows are drawn by a
generator apart from the training windows' (``PROBE_TAG``), so that the probe is no training batch.
"""

from __future__ import annotations

import numpy as np

from .noise import CLEAN, NoisedStream, noise_vocabulary, parse_setting, placement_seed

__all__ = ["MATERIALIZE_TOKENS", "PROBE_TAG", "RunStream", "probe_stream", "run_stream"]

MATERIALIZE_TOKENS = 1 << 26  # streams up to 64M tokens are noised once, whole (the same tokens, tested)
PROBE_TAG = 0x9B0BE  # the probe's generators are seeded (PROBE_TAG, seed): never a training seed's stream


class RunStream:
    """A run's training stream (``tokens``: anything sliceable; ``read(a, b)`` gives tokens and noise mask) and its
    noise vocabulary ``noise_ids``."""

    def __init__(self, tokens, read, noise_ids: np.ndarray):
        self.tokens, self.read, self.noise_ids = tokens, read, noise_ids

    def probe(self, windows: int, seq_len: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, mask), (windows, seq_len) each: fixed windows of the stream at starts drawn by ``(PROBE_TAG,
        seed)`` (not the generator of the training windows of seed ``seed``)."""
        rng = np.random.default_rng((PROBE_TAG, seed))
        starts = rng.integers(0, len(self.tokens) - seq_len, size=windows)
        pairs = [self.read(int(a), int(a) + seq_len) for a in starts]
        return np.stack([t for t, _ in pairs]).astype(np.int64), np.stack([m for _, m in pairs])


def probe_stream(val, noise: dict, vocab_size: int) -> RunStream:
    """The diagnostics' noisy probe stream, the same for every run: the validation stream ``val`` noised by
    ``noise["reference_setting"]`` at the placement ``(noise seed, PROBE_TAG)``; its ``noise_ids`` are the reference's
    vocabulary."""
    parsed = parse_setting(noise["reference_setting"])
    ids = noise_vocabulary(vocab_size, parsed.vocab, tuple(noise["special_ids"]), noise["allow_special"])
    return _noised(NoisedStream(val, parsed, ids, placement_seed(noise["seed"], PROBE_TAG), eot=noise["eot_id"]), ids)


def _noised(stream: NoisedStream, ids: np.ndarray) -> RunStream:
    """A noised stream read as it goes, or (up to MATERIALIZE_TOKENS) noised once, whole."""
    if len(stream) > MATERIALIZE_TOKENS:
        return RunStream(stream, stream.read, ids)
    tokens, mask = stream.materialize()
    return RunStream(tokens, lambda a, b: (tokens[a:b], mask[a:b]), ids)


def run_stream(clean, setting: str, noise: dict, vocab_size: int, seed: int) -> RunStream:
    """The stream a run of ``setting`` and training ``seed`` reads. ``noise``: the injection's ``seed``,
    ``allow_special``, ``special_ids``, ``eot_id`` and ``reference_setting`` (a clean stream's ``noise_ids`` and mask
    are the reference vocabulary's ids where they occur)."""
    special, allow = tuple(noise["special_ids"]), noise["allow_special"]
    if setting == CLEAN:
        ids = noise_vocabulary(vocab_size, parse_setting(noise["reference_setting"]).vocab, special, allow)

        def read(a, b):
            tokens = np.asarray(clean[a:b])
            return tokens, np.isin(tokens, ids)

        return RunStream(clean, read, ids)
    parsed = parse_setting(setting)
    ids = noise_vocabulary(vocab_size, parsed.vocab, special, allow)
    return _noised(NoisedStream(clean, parsed, ids, placement_seed(noise["seed"], seed), eot=noise["eot_id"]), ids)
