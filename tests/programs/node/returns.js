// Calls whose results a step out of (or over) them reports: a number, an object, a recursive call, a throw caught
// inside the function and one that leaves it.
function add(a, b) {
  const total = a + b;
  return total * 2; // add returns
}

function makePoint(x) {
  const point = { x, y: x + 1 }; // makePoint body
  if (x < 0) {
    return null;
  }
  return point;
}

function factorial(n) {
  if (n <= 1) {
    return 1; // factorial base
  }
  return n * factorial(n - 1); // factorial recurses
}

function countdown(n) {
  if (n === 0) {
    return 0;
  }
  return 1 + countdown(n - 1); // countdown recurses
}

function parsed(text) {
  let value = 0; // parsed body
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      value = JSON.parse(text);
    } catch (error) {
      value = -2;
    }
  }
  return value;
}

function checked(v) {
  if (v < 0) {
    throw new RangeError(`negative: ${v}`); // checked throws
  }
  return v;
}

const x = add(1, 2); // first call
const y = add(x, 3);
const point = makePoint(y); // point call
const f = factorial(3); // factorial call
const counted = countdown(3) + countdown(300); // countdown call
const parsedValue = parsed("{"); // parsed call
let c = 0;
try {
  c = checked(-1); // checked call
} catch (error) {
  c = -1; // checked error caught
}
console.log(x, y, point, f, counted, parsedValue, c);
