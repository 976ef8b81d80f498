// An await chain whose innermost function throws: the rejection reaches main through Promise.all, which
// V8 counts as a handler, so the throw is 'caught' and never pauses; the program ends on it.
'use strict';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function fetchOne(id) {
  await sleep(1);
  if (id === 2) throw new Error(`no item ${id}`); // fetchOne throws
  return id;
}
async function fetchAll() {
  return Promise.all([1, 2, 3].map((id) => fetchOne(id)));
}
async function main() {
  const items = await fetchAll();
  console.log(items);
}
main(); // the program starts
