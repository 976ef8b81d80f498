// Bindings in their temporal dead zone: V8 reads them as undefined, polydbg says they are uninitialized.
function settle(order) {
  const total = order.price * order.count; // before total
  let note;
  for (const item of order.items) {
    const label = `${item}!`; // in the loop
    note = label;
  }
  const done = /}/.test("}") && note !== undefined; // a regex with a brace, for the scanner
  return [total, note, done];
}

console.log(settle({ price: 2, count: 3, items: ["a", "b"] }).join(" "));
