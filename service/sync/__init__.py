"""One sync pass per project: connector records → normalize → store, with sync state."""
