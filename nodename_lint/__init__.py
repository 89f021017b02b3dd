"""nodename-lint: predicts what the cluster will do with a manifest that pins a Pod to a node."""

__version__ = "0.2.0"
