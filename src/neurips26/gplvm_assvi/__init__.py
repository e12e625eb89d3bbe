"""Paper 17: GPLVM with amortized structured stochastic variational inference (work in progress: the quick data,
the SE-ARD psi-statistics, the mean-field bound and the reconstruction metrics; no encoder, training, rules or
claims yet)."""
