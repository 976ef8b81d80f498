"""The Java Debug Wire Protocol: packet codec and client."""
