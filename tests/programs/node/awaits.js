// An await chain three deep, started from a timer: leaf is stopped in after its own await, with nothing
// but itself on the synchronous stack; its callers are past the awaits (V8's async stack trace): middle
// awaits leaf, top awaits middle, start called top from the timer it set. The .then callback is
// reached past a Promise.then.
'use strict';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function leaf(order) {
  await sleep(1);
  const total = order.count * order.price;
  return total; // in leaf
}

async function middle(order) {
  await sleep(1);
  const total = await leaf(order); // middle awaits leaf
  return total + 1;
}

async function top() {
  const order = { count: 3, price: 7 };
  const total = await middle(order); // top awaits middle
  return total;
}

function start() {
  top().then((total) => {
    console.log(`total ${total}`); // in then
  });
}

setTimeout(start, 1); // the timer
