"""Paper 16: an analytically tractable model of multistage training (pretraining, SFT, RL); our reconstruction."""
