"""`nodename-lint webhook`: the rules at admission time, as a validating admission webhook.

- review.py: one AdmissionReview in, one verdict out, through the same engine and rules as the CLI;
- server.py: the HTTPS server (POST /validate, /healthz, /readyz, /metrics);
- metrics.py: the Prometheus metrics;
- manifests.py: what installs it (`nodename-lint webhook manifests`).

The cluster state comes from cluster/watch.py (kept current by watches) or from a file, and is an input
to the rules as everywhere else: no rule fetches anything.
"""
