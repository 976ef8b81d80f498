"""The V8 inspector protocol (CDP) client."""
