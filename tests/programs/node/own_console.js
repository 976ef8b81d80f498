// Puts a console of its own in globalThis, as test runners do (vitest's worker, jest): a console.Console,
// which has no context().
globalThis.console = new console.Console(process.stdout, process.stderr);
let total = 0;
for (let i = 0; i < 5; i++) {
  total += i; // own console loop
}
console.log(`total ${total}`);
