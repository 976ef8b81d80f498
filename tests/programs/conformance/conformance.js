// The conformance program (the same computation as conformance.py, .c, .cpp, rust/ and go/): prints and exits with 13.

function add(a, b) { // add starts
  const total = a + b; // in add
  return total;
}

function main() {
  const x = 3;
  const y = 4;
  let s = add(x, y); // call add
  for (let i = 0; i < 4; i++) { // loop
    s += i; // loop body
  }
  console.log(`result ${s}`); // print result
  if (process.argv.length > 2) {
    setInterval(() => {}, 60000); // with an argument, stay until killed
  }
  return s;
}

process.exitCode = main();
