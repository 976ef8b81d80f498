#!/usr/bin/env node
// A script's top-level bindings in their temporal dead zone. In CommonJS, V8 gives the top level as the local
// scope of the function Node wraps the file in; a function called while the file loads reaches it as a closure.
const role = process.argv[2] || "parent";
function describe() {
  return `${role} ${total}`; // in describe
}
let said;
try {
  said = describe(); // too early: total is not declared yet
} catch (error) {
  said = error.name;
}
const total = role.length; // declares total
console.log(said, describe());
if (role === "parent") {
  require("child_process").fork(__filename, ["child"]);
}
