// Values of every kind the node backend shows.
class Shape {
  get kind() {
    throw new Error("inherited getters must not run while listing either");
  }
}

class Point extends Shape {
  constructor(x, y) {
    super();
    this.x = x;
    this.y = y;
  }
  get norm() {
    throw new Error("getters must not run while listing");
  }
}

function inspect() {
  const point = new Point(1, 2);
  const big = Array.from({ length: 100000 }, (_, i) => i * 2);
  const empty = [];
  const map = new Map([["a", 1], ["b", { nested: true }]]);
  const set = new Set(["x", "y"]);
  const error = new TypeError("bad thing");
  const pending = new Promise(() => {});
  const done = Promise.resolve(42);
  const bytes = new Uint8Array([1, 2, 3]);
  const buffer = Buffer.from("hi");
  const text = "héllo \"quoted\"";
  const nothing = null;
  let missing;
  const fn = (a, b) => a + b;
  const nested = { level1: { level2: { level3: "deep" } }, list: [1, 2, 3] };
  const lazy = { get boom() { throw new Error("getter ran"); }, plain: 1 };
  return point; // inspect here
}

inspect();
