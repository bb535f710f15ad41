"""Health and readiness checks, Prometheus metrics, structured logs with request ids."""
