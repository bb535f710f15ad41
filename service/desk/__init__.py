"""The editor's desk: the draft of a window as an editor sees it, with curation buttons."""
