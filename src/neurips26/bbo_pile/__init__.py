"""Paper 05: BBO-Pile (optimization trajectories for foundation models of black-box optimization)."""
