"""Changes: merged pull requests, with merge date and first shipping releases (R3)."""
