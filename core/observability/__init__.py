"""What operators see of the service: Prometheus metrics (metrics.py, the /metrics view and the workers' exporter),
OpenTelemetry traces (tracing.py, off by default) and structured logs (log_context.py). docs/operations/reference.md
lists every metric, its labels and the alerts built on them."""
