const check = require("cartcheck");
const { total, discounted } = require("../../cart.js");

describe("cart", function () {
  it("adds the prices", function () {
    const cyclic = { prices: [10, 20, 30] };
    cyclic.self = cyclic;
    check(cyclic).equals(cyclic); // its library throws and catches showing it: a pass
    check(total(cyclic.prices)).equals(60);
  });

  it("checks many carts", function () {
    for (let i = 0; i < 120; i++) {
      const cyclic = { prices: [i] };
      cyclic.self = cyclic;
      check(cyclic).equals(cyclic); // thrown and caught in cartcheck each time
    }
    check(total([1, 2])).equals(4); // past the packages' budget: not stopped at
  });

  it("takes the discount", function () {
    const expected = 54;
    const got = discounted([10, 20, 30], 10);
    check(got).equals(expected); // discount check
  });
});
