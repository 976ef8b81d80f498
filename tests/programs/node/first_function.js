// A script whose top level has nothing to stop at before its first function's body: V8 binds a breakpoint on
// line 0 there, so polydbg's entry breakpoint (which pauses a file with breakpoints before it runs) sat in square().
function square(i) {
  return i * i;
}

let total = 0; // start
for (let i = 0; i < 200000; i++) {
  total += square(i % 10);
}
console.log(`total ${total}`);
