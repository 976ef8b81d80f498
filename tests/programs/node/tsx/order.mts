// An ES module in TypeScript: tsx runs it through Node's module hooks, which run in a worker of Node's own.
interface Order {
  price: number;
  count: number;
}

const order: Order = { price: 2, count: 3 };
const total: number = order.price * order.count;
console.log(`total ${total}`); // print total
