"""The language server (`nodename-lint lsp`). pygls and lsprotocol load only through this package."""
