'use strict';
function add(a, b) {
  const sum = a + b;
  return sum;
}
module.exports = {
  adds() { if (add(2, 3) !== 5) throw new Error('2 + 3'); },
  addsNegatives() { if (add(-2, -3) !== -5) throw new Error('-2 + -3'); },
};
