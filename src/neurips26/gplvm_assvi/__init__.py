"""Paper 17: GPLVM with amortized structured stochastic variational inference (work in progress: the quick data,
the SE-ARD psi-statistics and the mean-field bound; no encoder, training, rules or claims yet)."""
