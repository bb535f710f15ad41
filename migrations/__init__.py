"""Alembic migrations of the store (``digest db upgrade``)."""
