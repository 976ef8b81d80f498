// Stepping over await stays in the function.
function delay(ms, value) {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

async function work() {
  const first = await delay(10, 1); // first await
  const second = await delay(10, 2);
  const sum = first + second;
  return sum;
}

work().then((sum) => {
  console.log("sum", sum);
  process.exitCode = 7;
});
