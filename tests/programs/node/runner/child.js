'use strict';
const file = process.argv[2];
const tests = require(file);
let passed = 0;
let failed = 0;
for (const [name, test] of Object.entries(tests)) {
  try {
    test();
    passed += 1;
  } catch (err) {
    failed += 1;
    console.log(`FAIL ${name}: ${err.message}`);
  }
}
process.send({ file, passed, failed }, () => process.exit(0));
