// An ES module that throws at its top level (Node reports it as caught: nodejs/node#50430).
const limit = 3;
throw new Error(`top ${limit}`); // top-level throw
