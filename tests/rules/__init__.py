"""Tests of one rule each: tests/rules/test_MODULE.py for rules/MODULE.py (CONTRIBUTING.md, "Adding a rule")."""
