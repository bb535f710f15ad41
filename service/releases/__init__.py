"""Releases of tracked projects, with parsed versions and release status (R2)."""
