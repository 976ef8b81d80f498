"""Debug Adapter Protocol client."""
