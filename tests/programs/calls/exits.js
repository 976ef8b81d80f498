// A call that never returns: the program ends inside it.
function shutdown(code) {
  console.log("bye");
  process.exit(code);
}

shutdown(0);
