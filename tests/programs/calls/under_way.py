# A call trace begun inside the function it names: outer's call is under way at the breakpoint.
def helper(x):
    return x * 2


def outer(n):
    a = helper(n)  # stop here
    b = helper(a)
    return a + b


print(outer(3))
print(outer(4))
