// A loop for conditions, hit counts and logpoints.
let total = 0;
for (let i = 0; i < 10; i++) {
  total += i; // loop body
}
console.log("total", total);
process.exit(3);
