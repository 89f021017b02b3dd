"""--fix and --diff: rules describe edits (`edits`), the runner splices them into the file's text.

This package is imported by rule modules for the edit types only; the text machinery
(`runner`, `splice`, `render`, which needs ruamel.yaml) loads only when --fix or --diff is used.
"""
