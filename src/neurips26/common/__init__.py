"""What two or more papers share: io, downloads, claims, provenance, plotting."""
