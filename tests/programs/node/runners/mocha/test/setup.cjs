// Loaded by the test script's --require: a test run by name keeps the script's options.
process.env.CART_CURRENCY = "EUR";
