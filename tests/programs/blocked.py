"""Says it is up, then blocks its only thread in a lock wait (C code: no Python runs until it ends)."""
import threading

print("up", flush=True)
threading.Event().wait()
