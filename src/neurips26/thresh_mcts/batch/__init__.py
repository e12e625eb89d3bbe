r"""Many independent runs of one sampling rule advanced together with numpy.

:func:`run_batch` plays ``R`` runs of :func:`algorithms.run` at once: run ``r`` reads its rewards
from ``tapes[r]`` (the j-th pull of leaf l returns ``tapes[r, l, j]``), and every run makes
*exactly* the decisions of the scalar reference on its own tape: the same leaves, the same stopping
time ``tau``, the same answer, the same censoring, the same final counts. Stopped runs leave the
batch (the state arrays are compacted) and keep their own ``tau``. ``delta`` may differ between runs
(one batch for several confidence levels). A round costs ``O(depth)`` numpy calls whatever the
number of runs, so the batch pays off with many runs.

Modules, one job each:

* :mod:`.runs`: the entry point :func:`run_batch` (argument checks, dispatch, :class:`BatchResult`);
* :mod:`.layout`: the batched tree state (slots of every node in ``(W, n)`` planes, padded children
  per level) and the exact reductions over children;
* :mod:`.track_and_stop`: the batched Track-and-Stop rules (selection, pull, DP backup, GLR stop);
* :mod:`.lucb`: batched LUCB-MCTS (confidence bounds, propagation, representative leaves);
* :mod:`.handoff`: when the last runs go to the scalar continuation (timed).

Exactness (the scalar rule is the specification):

* sums over children (``T*`` of a forall-node, ``Z`` of an exists-node) are added in the tournament
  order of :func:`incremental.pairwise_sum`: adjacent pairs, then pairs of pairs. Padding a node
  with more zeros than its own power of two only adds ``+ 0.0`` at the top, which changes no bit;
* the leaf divergence is the formula of :func:`incremental.leaf_divergence` operation by operation,
  with its ``log`` and ``** 2`` mapped over the vector from Python (``math.log``,
  ``float.__pow__``): numpy's SIMD ``np.log`` / ``np.square`` differ from libm in the last bit on
  some inputs. Everything else (means, ``N d``, ``1/d``, ``t w - N``, the weights) is one IEEE
  operation per element, identical in numpy;
* ties: the best exists-child is the least ``(T*, min leaf index)`` (the first minimum in min-leaf
  order), the certificate minimum the least ``(N d, N, leaf)`` (``N * 2^20 + leaf`` packed exactly
  in a float64), every argmax/argmin over leaves takes the smallest index; selections are masks and
  ``x * 1.0``, ``x + 0.0``, ``x / 1.0`` or ``fmin`` over ``nan``, which change no bit;
* ``beta(t, delta)`` comes from the same tables (:class:`algorithms._Beta`), LUCB's confidence
  bounds from the same function (:func:`algorithms._confidence_bounds`), cached per ``(mean,
  count)``.

The tail of heavy-tailed run lengths is finished by the reference's own engines from each run's
current state (:class:`algorithms._FullEngine`; the incremental one, which makes the same decisions,
for the ratio rule) when that is cheaper than a numpy round (:mod:`.handoff`).
"""

from .runs import BATCH_RULES, BatchResult, run_batch

__all__ = ["BATCH_RULES", "BatchResult", "run_batch"]
