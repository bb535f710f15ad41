"""Blog posts from project feeds (RSS/Atom), with each feed's validators and health."""
