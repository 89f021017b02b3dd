"""The commands of `nodename-lint`, one module each (as ruff's commands/ and kube-linter's pkg/command/).

`lint.py` (the default command) hands its options to `run.py`, the whole lint run; `audit.py`,
`snapshot.py`, `lsp.py`, `rules.py` and `explain.py` are the other commands; `options.py` holds
the options and helpers they share, `reports.py` where each report goes. `nodename_lint/cli.py`
gathers them into the group the console scripts run.
"""
