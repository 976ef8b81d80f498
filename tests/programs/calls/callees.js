// A call trace's callees on Node: a recorded function calling helpers of the program's (one through a callback
// map calls, one a method called as this.x(), one recursive), a helper that throws (caught), one whose recursion
// throws from its bottom (caught by it), an async helper awaited, a helper of another module; and the same helpers
// called again outside the recorded function (not its callees).
const { pad } = require("./callees_lib");

function weight(word) {
  if (!/^\s*\d+\s*$/.test(word)) throw new TypeError(`not a number: ${word}`);
  return Number(word.trim()) * 2;
}

function countdown(n) {
  if (n === 0) return 0;
  return 1 + countdown(n - 1);
}

function dive(n) {
  if (n === 0) throw new RangeError("bottom");
  return dive(n - 1);
}

function safeDepth(n) {
  try {
    return dive(n);
  } catch (err) {
    return -1;
  }
}

class Scale {
  constructor(factor) {
    this.factor = factor;
  }

  times(x) {
    return x * this.factor;
  }

  apply(x) {
    return this.times(x) + 1;
  }
}

function total(words) {
  let sum = words.map((w) => weight(w)).reduce((a, b) => a + b, 0);
  try {
    sum += weight("x");
  } catch (err) {
    sum -= 1;
  }
  return new Scale(1).apply(sum) + safeDepth(3) + countdown(2) + pad("").length;
}

async function later(x) {
  await null;
  return x + 1;
}

async function gather(x) {
  const got = await later(x);
  return got * 10;
}

console.log("total", total(["1", " 2"]));
console.log("after", weight("5"), countdown(1));
gather(4).then((v) => console.log("gather", v));
