"""The rule catalogue: one module per rule (how to add one: CONTRIBUTING.md, "Adding a rule")."""
