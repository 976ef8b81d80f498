const { describe, it, test } = require("node:test");
const assert = require("node:assert");
const { total, discounted, parse } = require("../../cart");

describe("cart", () => {
  describe("totals", () => {
    it("adds the prices", () => {
      const prices = [3, 4, 5];
      assert.strictEqual(total(prices), 12);
    });

    it("takes the discount", () => {
      const prices = [10, 20, 30];
      const expected = 54;
      const got = discounted(prices, 10);
      assert.strictEqual(got, expected); // discount check
    });
  });

  it("parses an item", () => {
    const text = '{"name": "pen"}';
    assert.strictEqual(parse(text), 2); // parse call
  });
});

test("expects a refusal", () => {
  assert.throws(() => parse("{}"), TypeError);
  try {
    parse("not json");
  } catch (error) {
    assert.ok(error instanceof SyntaxError);
  }
});

test("waits for the total", async () => {
  const prices = await Promise.resolve([1, 2]);
  assert.strictEqual(total(prices), 4); // async check
});

test("tries many texts", () => {
  let refused = 0;
  for (let i = 0; i < 300; i++) {
    try {
      parse(`{"price": ${i}`);
    } catch {
      refused++;
    }
  }
  assert.strictEqual(refused, 300);
});

test("waits for a slow total", async () => {
  console.log("waiting for the total");
  await new Promise((resolve) => setTimeout(resolve, 4500)); // longer than a quiet program is waited for
  assert.strictEqual(total([1]), 2); // slow check
});
