"""Paper 14: post-training methods (DPO, RLHF, NLHF) as reference-dependent probabilistic voting rules."""
