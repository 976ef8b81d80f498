// Busy for a long time (pause lands in the loop), or idle on a timer with "idle".
let counter = 0;
if (process.argv[2] === "idle") {
  setTimeout(() => console.log("done"), 60000);
} else {
  const end = Date.now() + 60000;
  while (Date.now() < end) {
    counter++; // busy loop
  }
}
