// The await chain of ../awaits.js in TypeScript, run by tsx: its async callers are reported in .ts lines.
interface Order {
  count: number;
  price: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function leaf(order: Order): Promise<number> {
  await sleep(1);
  const total: number = order.count * order.price;
  return total; // in leaf
}

async function middle(order: Order): Promise<number> {
  await sleep(1);
  const total: number = await leaf(order); // middle awaits leaf
  return total + 1;
}

async function top(): Promise<number> {
  const order: Order = { count: 3, price: 7 };
  const total: number = await middle(order); // top awaits middle
  return total;
}

function start(): void {
  top().then((total: number) => {
    console.log(`total ${total}`); // in then
  });
}

setTimeout(start, 1); // the timer
