const check = require("cartcheck");
const { total, discounted } = require("../../cart.js");

describe("cart", function () {
  it("adds the prices", function () {
    const cyclic = { prices: [10, 20, 30] };
    cyclic.self = cyclic;
    check(cyclic).equals(cyclic); // its library throws and catches showing it: a pass
    check(total(cyclic.prices)).equals(60);
  });

  it("takes the discount", function () {
    const expected = 54;
    const got = discounted([10, 20, 30], 10);
    check(got).equals(expected); // discount check
  });
});
