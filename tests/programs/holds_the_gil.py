"""Says it is up, then computes in C for a very long time without releasing the interpreter's lock."""
print("up", flush=True)
total = sum(range(10**14))
