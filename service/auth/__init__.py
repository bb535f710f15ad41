"""API tokens with roles, and the access rule of every route."""
