"""Observing a run: message traces (`tracing`) and Prometheus metrics (`metrics`)."""
