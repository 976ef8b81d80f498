import { expect } from "chai";
import { createRequire } from "node:module";

const { total, discounted, parse } = createRequire(import.meta.url)("../../cart.js");

describe("cart", function () {
  let prices;

  beforeEach(function () {
    prices = [10, 20, 30];
  });

  describe("totals", function () {
    it("adds the prices", function () {
      expect(total(prices)).to.equal(60);
    });

    it("takes the discount", function () {
      const expected = 54;
      const got = discounted(prices, 10);
      expect(got).to.equal(expected); // discount check
    });
  });

  it("parses an item", function () {
    const text = '{"name": "pen"}';
    expect(parse(text)).to.equal(2); // parse call
  });
});

it("expects a refusal", function () {
  expect(process.env.CART_CURRENCY).to.equal("EUR"); // set by the test script's --require
  expect(() => parse("{}")).to.throw(TypeError);
});

it("compares through a library", function () {
  const { diffArrays } = createRequire(import.meta.url)("diff");
  const changes = diffArrays([10, 20], [10, null], {
    comparator: (left, right) => left.toFixed(0) === right.toFixed(0), // compared in diff's loop
  });
  expect(changes).to.have.length(2);
});
