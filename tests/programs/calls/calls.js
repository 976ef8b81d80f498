// A call trace's subjects: a recursive function, a method that throws (its caller catches it), a module
// loaded as the program runs, and a worker thread with a function of its own.
const { Worker } = require("node:worker_threads");
const path = require("node:path");

function fib(n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

class Parser {
  parse(text) {
    if (!text) throw new Error("empty input");
    return { length: text.length, text };
  }
}

function parseAll(parser, texts) {
  let parsed = 0;
  for (const text of texts) {
    try {
      parser.parse(text);
      parsed += 1;
    } catch (err) {
      console.log("skipped:", err.message);
    }
  }
  return parsed;
}

const { monthOf } = require("./dates");
console.log("fib", fib(6));
console.log("parsed", parseAll(new Parser(), ["ab", "", "xyz"]));
console.log("month", monthOf("2024-03-09"));
const worker = new Worker(path.join(__dirname, "calls_worker.js"), { workerData: 4 });
worker.on("message", (total) => console.log("worker", total));
