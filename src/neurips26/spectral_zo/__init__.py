"""Paper 13 (spectral_zo): SZO-kappa, spectral zeroth-order gradient estimation from activation geometry."""
