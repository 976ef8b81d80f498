"""Values too long to list whole: a default answer must stay small and say how to get the rest."""

rows = [f"row {n}: " + "x" * 300 for n in range(200)]
text = "y" * 100_000
print(len(rows), len(text))  # stop here
