def busy():
    alpha, bravo, charlie, delta, echo_, foxtrot, golf = 1, 2, 3, 4, 5, 6, 7
    hotel, india, juliet, kilo, lima, mike, november = 8, 9, 10, 11, 12, 13, 14
    zulu = alpha + november
    yankee = zulu * 2  # uses zulu
    return yankee + sum((bravo, charlie, delta, echo_, foxtrot, golf, hotel, india, juliet, kilo, lima, mike))


print(busy())
