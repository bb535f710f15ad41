"""Draft weekly digests over a UTC window."""
