const { total, discounted, parse } = require("../../cart");

describe("cart", () => {
  describe("totals", () => {
    it("adds the prices", () => {
      const prices = [3, 4, 5];
      expect(total(prices)).toBe(12);
    });

    it("takes the discount", () => {
      const prices = [10, 20, 30];
      const expected = 54;
      const got = discounted(prices, 10);
      expect(got).toBe(expected); // discount check
    });
  });

  it("parses an item", () => {
    const text = '{"name": "pen"}';
    expect(parse(text)).toBe(2); // parse call
  });

  it.each([[[1, 2], 3], [[2, 2], 5]])("sums %j to %i", (prices, sum) => {
    expect(total(prices)).toBe(sum); // each check
  });
});

test("expects a refusal", async () => {
  expect(() => parse("{}")).toThrow(TypeError);
  await expect(Promise.reject(new Error("no"))).rejects.toThrow("no");
  try {
    parse("not json");
  } catch (error) {
    expect(error).toBeInstanceOf(SyntaxError);
  }
});

test("waits for the total", async () => {
  const prices = await Promise.resolve([1, 2]);
  expect(total(prices)).toBe(4); // async check
});
