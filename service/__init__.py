"""Weekly digest service: store, inclusion logic, digests, scheduler, API and CLI."""
