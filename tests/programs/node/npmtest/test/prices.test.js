const assert = require("assert");
const { total } = require("../prices");

const prices = [3, 4, 5];
const sum = total(prices);
assert.strictEqual(sum, 12); // checks the sum
console.log(`prices test passed: ${sum}`);
