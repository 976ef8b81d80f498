def same(expected, got):
    assert expected == got  # helper check: not a test module, so pytest leaves this assert as it is
