// Throws a user class's subclass caught, a TypeError caught, then the subclass uncaught.
class AppError extends Error {}
class ParseError extends AppError {
  constructor(text) {
    super(`not a number: ${text}`);
    this.name = "ParseError";
    this.input = text;
  }
}

function parse(text) {
  if (!/^\d+$/.test(text)) {
    throw new ParseError(text); // raise here
  }
  return Number(text);
}

function lenient(text) {
  try {
    return parse(text);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return 0;
  }
}

try {
  null.length;
} catch (err) {
  console.log("no object:", err.constructor.name);
}
console.log("lenient", lenient("x1"));
console.log("strict", parse("y2"));
