// The code under test: a cart's total, with a discount that is off by one.
function total(prices) {
  let sum = 0;
  for (const price of prices) {
    sum += price;
  }
  return sum;
}

function discounted(prices, percent) {
  const full = total(prices);
  const off = Math.round((full * percent) / 100) + 1; // the bug: one too many
  return full - off;
}

function parse(text) {
  const item = JSON.parse(text);
  return item.price.amount; // throws when price is missing
}

module.exports = { total, discounted, parse };
