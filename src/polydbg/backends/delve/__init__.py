"""Go through delve's own DAP server (``dlv dap``)."""
