"""Paper 04, BIRD: Bayesian information restricted diffusion (Hunt, Kamb, Ganguli)."""
