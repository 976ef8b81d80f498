// Stepping over a call whose body has a breakpoint that a hit condition makes skip most of its hits.
function largest(values) {
  let best = null;
  for (const value of values) {
    if (best === null || value > best) { // compare
      best = value;
    }
  }
  return best;
}

const first = largest([3, 1, 4]); // first call
const second = largest([5, 9]); // second call
console.log(first, second);
