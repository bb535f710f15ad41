"""Store generations: counters the database itself bumps whenever what a draft reads
changes, so that a draft built once can be served until they move."""
