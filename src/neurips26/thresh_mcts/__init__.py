"""Paper 12: thresholding Monte Carlo tree search (Track-and-Stop with ratio-based tracking)."""
