import { describe, expect, it, test } from "vitest";
import { discounted, parse, total } from "../../cart.js";

describe("cart", () => {
  describe("totals", () => {
    it("adds the prices", () => {
      const prices: number[] = [3, 4, 5];
      expect(total(prices)).toBe(12);
    });

    it("takes the discount", () => {
      const prices: number[] = [10, 20, 30];
      const expected = 54;
      const got: number = discounted(prices, 10);
      expect(got).toBe(expected); // discount check
    });
  });

  it("parses an item", () => {
    const text = '{"name": "pen"}';
    expect(parse(text)).toBe(2); // parse call
  });
});

test("expects a refusal", async () => {
  expect(() => parse("{}")).toThrow(TypeError);
  await expect(Promise.reject(new Error("no"))).rejects.toThrow("no");
});
