r"""Our bound against GPyTorch's on a case both compute exactly (the check K1 of paper 17, and a test).

With the latents known (``s = 0``) the Bayesian GPLVM's bound of :func:`.elbo.elbo_terms` without its
``KL(q(X))`` term is the sparse variational GP bound of Hensman et al. 2013 for each output ``d``: GPyTorch's
``VariationalELBO`` of an ``ApproximateGP`` with an ``UnwhitenedVariationalStrategy`` over the same inducing inputs,
a ``CholeskyVariationalDistribution`` set to our ``q(u_d)``, a ``ScaleKernel(RBFKernel)`` with our SE-ARD settings
and a ``GaussianLikelihood`` with noise ``1 / beta``. GPyTorch averages over the data points, so each output's bound
is multiplied by its number of observed entries; missing entries are left out of that output's data.

Two Monte Carlo cross-checks extend it to latent uncertainty (checks K3 and K4), each returning the z-score of our
closed form against the mean of independent draws:

* :func:`psi_bound_z`: with ``q(x_n) = N(mu_n, diag s_n)`` the data part of our mean-field bound (psi-statistics)
  is the expectation over x of the sparse GP bound above, so it is compared with GPyTorch's bound averaged over
  draws of x;
* :func:`structured_given_u_z`: the structured bound given a draw U (:func:`.elbo.local_bound_given_u`, closed form
  in x through the psi-statistics) against a Monte Carlo of the same bound over draws ``x_n ~ q(x_n | y_n, U)``
  with GPyTorch's kernel evaluated at the drawn points: ``sum_d log N(y_nd | a(x)^T u_d, 1/beta) - beta/2 sum_d
  (k(x, x) - a(x)^T k_Z(x))``, ``a(x) = K_MM^-1 k_Z(x)``; the KL(q(x_n | U) || N(0, I)) term, closed form in both,
  is left out;
* :func:`psi_statistics_z`: the psi-statistics themselves against a Monte Carlo over ``draws`` (about 2,000) joint
  draws of every point's latent with GPyTorch's kernel: three sums over the points, ``sum psi1_nm``,
  ``sum psi2_nmm'`` and ``sum tr(K_MM^-1 psi2_n)`` (the trace term of the bound), each with its z-score. With
  thousands of draws and sums over the points (a bias adds up over the points, the noise only as their square root)
  it has far more power than the bound's check, whose draws are few and whose noise is that of the whole bound.

Each check returns its z-score with the standard error behind it, so that the smallest error it can detect (the
threshold times the standard error) can be reported beside the verdict. The closed forms are reached through
:mod:`.elbo` (``elbo.psi1``, ``elbo.psi2``): the statistics the bound uses are the ones checked.
"""

from __future__ import annotations

import math

import torch

from . import elbo as _elbo
from .elbo import JITTER, elbo_terms, inducing_inverse, local_bound_given_u

__all__ = [
    "gpytorch_bound", "gpytorch_bounds", "our_bound_at_means", "psi_bound_z", "psi_statistics_z",
    "structured_given_u_z",
]  # fmt: skip


def gpytorch_bound(x, y, mask, z, m, chol_s, variance, alpha, beta) -> float:
    """GPyTorch's sparse variational bound summed over the outputs, for latents ``x`` (N, Q) held fixed."""
    return gpytorch_bounds([x], y, mask, z, m, chol_s, variance, alpha, beta)[0]


def _kernel(z, variance, alpha, dtype):
    import gpytorch

    kernel = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=z.shape[1])).to(dtype)
    kernel.outputscale = variance
    kernel.base_kernel.lengthscale = alpha.rsqrt()
    return kernel


def gpytorch_bounds(xs, y, mask, z, m, chol_s, variance, alpha, beta) -> list[float]:
    """:func:`gpytorch_bound` for every latents ``x`` in ``xs`` (one GPyTorch model per output, reused)."""
    import gpytorch
    from gpytorch.distributions import MultivariateNormal
    from gpytorch.variational import CholeskyVariationalDistribution, UnwhitenedVariationalStrategy

    jitter = float(JITTER * variance)

    class _Strategy(UnwhitenedVariationalStrategy):
        @property
        def prior_distribution(self):  # GPyTorch's prior adds a fixed 1e-3 jitter; ours adds the strategy's
            out = self.model.forward(self.inducing_points)
            return MultivariateNormal(out.mean, out.lazy_covariance_matrix.add_jitter(self.jitter_val))

    class _SVGP(gpytorch.models.ApproximateGP):
        def __init__(self):
            dist = CholeskyVariationalDistribution(len(z))
            super().__init__(_Strategy(self, z, dist, learn_inducing_locations=False, jitter_val=jitter))
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=z.shape[1]))

        def forward(self, inputs):
            return MultivariateNormal(self.mean_module(inputs), self.covar_module(inputs))

    totals = [0.0] * len(xs)
    with torch.no_grad():
        for d in range(y.shape[1]):
            rows = mask[:, d]
            if not rows.any():
                continue
            model = _SVGP().to(y.dtype)
            model.covar_module.outputscale = variance
            model.covar_module.base_kernel.lengthscale = alpha.rsqrt()
            dist = model.variational_strategy._variational_distribution
            dist.variational_mean.copy_(m[d])
            dist.chol_variational_covar.copy_(chol_s[d])
            model.variational_strategy.variational_params_initialized.fill_(1)  # else the first call resets q(u)
            likelihood = gpytorch.likelihoods.GaussianLikelihood(
                noise_constraint=gpytorch.constraints.GreaterThan(0.0)
            ).to(y.dtype)
            likelihood.noise = 1 / beta
            n = int(rows.sum())
            bound = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=n)
            model.train()
            likelihood.train()
            for i, x in enumerate(xs):
                totals[i] += n * float(bound(model(x[rows]), y[rows, d]))
    return totals


def our_bound_at_means(x, y, mask, z, m, chol_s, variance, alpha, beta) -> float:
    """Our bound's likelihood minus KL(q(U)) with the latents at ``x`` and zero latent variance."""
    terms = elbo_terms(y, mask, x, torch.zeros_like(x), z, m, chol_s, variance, alpha, beta)
    return float(terms["likelihood"] - terms["kl_u"])


def _z(closed: float, draws: torch.Tensor) -> float:
    """(closed - mean of draws) / its standard error; 0 when the draws agree exactly (no latent variance)."""
    return _z_and_error(closed, draws)[0]


def _z_and_error(closed: float, draws: torch.Tensor) -> tuple[float, float]:
    """(:func:`_z`, the standard error of the draws' mean)."""
    stderr = float(draws.std() / math.sqrt(len(draws)))
    gap = closed - float(draws.mean())
    if stderr == 0:
        return (0.0 if abs(gap) <= 1e-9 * max(abs(closed), 1.0) else math.inf), 0.0
    return gap / stderr, stderr


def psi_bound_z(mu, s, y, mask, z, m, chol_s, variance, alpha, beta, draws: int, generator,
                with_error: bool = False):  # fmt: skip
    """K3's bound z-score: our psi-statistics bound (likelihood minus KL(q(U))) at ``q(x_n) = N(mu_n, diag s_n)``
    against GPyTorch's bound at ``draws`` draws of x; with ``with_error``, (z, standard error in nats)."""
    terms = elbo_terms(y, mask, mu, s, z, m, chol_s, variance, alpha, beta)
    xs = [mu + s.sqrt() * torch.randn(mu.shape, dtype=mu.dtype, generator=generator) for _ in range(draws)]
    values = torch.tensor(gpytorch_bounds(xs, y, mask, z, m, chol_s, variance, alpha, beta), dtype=torch.float64)
    out = _z_and_error(float(terms["likelihood"] - terms["kl_u"]), values)
    return out if with_error else out[0]


def structured_given_u_z(mu, s, u, y, mask, z, variance, alpha, beta, draws: int, generator,
                         with_error: bool = False, chunk: int = 250):  # fmt: skip
    """K4's z-score: the structured bound given the draw ``u`` (D, M) with ``q(x_n | U) = N(mu_n, diag s_n)``, closed
    form, against a Monte Carlo of the same bound over ``draws`` draws of x with GPyTorch's kernel (module
    docstring); both without KL(q(x | U)). With ``with_error``, (z, standard error in nats)."""
    _, k_inv = inducing_inverse(z, variance, alpha)
    kl = 0.5 * (s + mu**2 - 1 - torch.log(s)).sum()
    closed = float(local_bound_given_u(y, mask, mu, s, z, u, k_inv, variance, alpha, beta).sum() + kl)
    kernel = _kernel(z, variance, alpha, y.dtype)
    obs = mask.to(y.dtype)
    y0 = torch.where(mask, y, torch.zeros_like(y))
    values, done = [], 0
    with torch.no_grad():
        k_zz = kernel(z, z).to_dense() + JITTER * variance * torch.eye(len(z), dtype=y.dtype)
        k_zz_inv = torch.linalg.inv(k_zz)
        while done < draws:
            c = min(chunk, draws - done)
            eps = torch.randn((c, *mu.shape), dtype=mu.dtype, generator=generator)
            x = (mu + s.sqrt() * eps).reshape(-1, mu.shape[1])
            k_xz = kernel(x, z).to_dense().reshape(c, len(mu), len(z))  # (c, N, M)
            a = k_xz @ k_zz_inv
            k_xx = kernel(x, x, diag=True).reshape(c, len(mu))
            gap = k_xx - (a * k_xz).sum(-1)  # k(x, x) - a^T k_Z(x)
            log_n = -0.5 * math.log(2 * math.pi) + 0.5 * torch.log(beta) - 0.5 * beta * (y0 - a @ u.T) ** 2
            values.append((log_n * obs).sum((1, 2)) - 0.5 * beta * (gap[..., None] * obs).sum((1, 2)))
            done += c
    out = _z_and_error(closed, torch.cat(values).to(torch.float64))
    return out if with_error else out[0]


PSI_STATISTICS = ("psi1_sum", "psi2_sum", "psi2_trace")


def psi_statistics_z(mu, s, z, variance, alpha, draws: int, generator, chunk: int = 250) -> dict:
    """The direct check of the psi-statistics (module docstring): for each of :data:`PSI_STATISTICS`, the closed
    form (through ``elbo.psi1`` / ``elbo.psi2``) against the mean over ``draws`` joint draws ``x_n ~ N(mu_n, diag
    s_n)`` of the same sum with GPyTorch's kernel at the drawn points. Returns ``{name: (z, standard error,
    closed value)}``."""
    k_zz = inducing_covariance_gpytorch(z, variance, alpha, mu.dtype)
    k_inv = torch.linalg.inv(k_zz)
    p1, p2 = _elbo.psi1(mu, s, z, variance, alpha), _elbo.psi2(mu, s, z, variance, alpha)
    closed = {"psi1_sum": float(p1.sum()), "psi2_sum": float(p2.sum()), "psi2_trace": float((p2 * k_inv).sum())}
    kernel = _kernel(z, variance, alpha, mu.dtype)
    values = {name: [] for name in PSI_STATISTICS}
    with torch.no_grad():
        done = 0
        while done < draws:
            c = min(chunk, draws - done)
            eps = torch.randn((c, *mu.shape), dtype=mu.dtype, generator=generator)
            x = (mu + s.sqrt() * eps).reshape(-1, mu.shape[1])
            k = kernel(x, z).to_dense().reshape(c, len(mu), len(z))  # (c, N, M)
            values["psi1_sum"].append(k.sum((1, 2)))
            values["psi2_sum"].append((k.sum(2) ** 2).sum(1))
            values["psi2_trace"].append(((k @ k_inv) * k).sum((1, 2)))
            done += c
    out = {}
    for name in PSI_STATISTICS:
        z_value, stderr = _z_and_error(closed[name], torch.cat(values[name]).to(torch.float64))
        out[name] = (z_value, stderr, closed[name])
    return out


def inducing_covariance_gpytorch(z, variance, alpha, dtype):
    """K_MM with GPyTorch's kernel and our jitter."""
    with torch.no_grad():
        return _kernel(z, variance, alpha, dtype)(z, z).to_dense() + JITTER * variance * torch.eye(len(z), dtype=dtype)
