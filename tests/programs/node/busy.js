// Busy for a long time (pause lands in the loop), idle on a timer with "idle", or idle while a
// forked copy of itself is busy with "child". It prints "busy" as it enters the loop and "idle" once
// only the timer is left: tests wait for that line, never for a time (a loaded machine takes long).
let counter = 0;
if (process.argv[2] === "idle") {
  setTimeout(() => console.log("done"), 60000);
  console.log("idle");
} else if (process.argv[2] === "child") {
  require("child_process").fork(__filename);
  setTimeout(() => console.log("done"), 60000);
} else {
  const end = Date.now() + 60000;
  console.log("busy");
  while (Date.now() < end) {
    counter++; // busy loop
  }
}
