// Throws according to its first argument: uncaught | caught | rejection.
function parse(text) {
  return JSON.parse(text); // parse may throw
}

function fail(kind) {
  const input = "{not json";
  if (kind === "caught") {
    try {
      parse(input);
    } catch (err) {
      console.log("caught", err.message);
    }
    return;
  }
  if (kind === "rejection") {
    Promise.reject(new RangeError("rejected on purpose"));
    return;
  }
  const limit = 3;
  throw new Error(`limit ${limit} exceeded`); // uncaught throw
}

fail(process.argv[2] || "uncaught");
