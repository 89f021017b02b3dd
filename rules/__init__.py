"""The rule catalogue: one module per rule (see README "Adding a rule")."""
