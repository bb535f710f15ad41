"""Tracked projects: which repositories are polled and what editors call them."""
