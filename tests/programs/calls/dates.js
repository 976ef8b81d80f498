// Loaded by calls.js after a call trace may have started.
function monthOf(date) {
  const month = Number(date.split("-")[1]);
  if (month > 12) throw new RangeError(`no month ${month}`);
  return month;
}

module.exports = { monthOf };
