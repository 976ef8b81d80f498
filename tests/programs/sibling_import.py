import loop
print("imported", loop.square(3))
