"""Editors' curation of a window's draft, kept apart from synced data so re-syncs and
taxonomy changes never wipe it."""
