"""Leases: which worker process may work on a project (or the whole store) for now."""
