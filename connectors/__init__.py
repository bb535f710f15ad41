"""Source connectors: fetch and parse into plain records. They never touch the database."""
