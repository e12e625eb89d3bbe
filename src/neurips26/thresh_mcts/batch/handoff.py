"""When a batch hands its last runs to the scalar continuation.

Run lengths are heavy-tailed, and a numpy round costs about as much for one run as for a hundred.
When the runs still going are so few that the scalar loop would be cheaper (``n_active * c_scalar <
c_round``, both timed on this machine), each of them is finished by a scalar continuation from its
current state (:func:`track_and_stop.tas_scalar`, :func:`lucb.lucb_scalar`). ``tail=0`` keeps every
round in numpy; ``tail=n`` hands off at ``n`` runs left. The results are the same in every case.
"""

from __future__ import annotations

CALIBRATION_ROUNDS = 24


class Handoff:
    """When to finish the remaining runs with the scalar continuation (module docstring): when
    ``n_active * c_scalar`` drops below the median time of the last 16 numpy rounds (checked every
    8 rounds). ``c_scalar`` is timed by ``calibrate`` on a copy of a live run: at the first check,
    and once more, from the state of that moment, before the first hand-off."""

    def __init__(self, tail, calibrate):
        self.fixed, self.calibrate = tail, calibrate
        self.scalar_round = None
        self.rechecked = False
        self.samples: list = []
        self.n_timed = 0

    def now(self, n_active: int) -> bool:
        if self.fixed is not None:
            return n_active <= self.fixed
        if self.n_timed < 16 or self.n_timed % 8:
            return False
        batch_round = sorted(self.samples)[len(self.samples) // 2]
        if self.scalar_round is None:
            self.scalar_round = self.calibrate()
        if n_active * self.scalar_round >= batch_round:
            return False
        if not self.rechecked:
            self.rechecked = True
            self.scalar_round = self.calibrate()
            return n_active * self.scalar_round < batch_round
        return True

    def timed(self, seconds: float) -> None:
        self.n_timed += 1
        self.samples.append(seconds)
        if len(self.samples) > 16:
            del self.samples[0]
