"""Paper 18: amortized optimal transport from sliced Kantorovich potentials (RA-OT, OA-OT)."""
