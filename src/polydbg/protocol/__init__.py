"""What every debugger-protocol client shares (see core)."""
