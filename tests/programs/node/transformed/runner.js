// Runs spec.js the way jest runs a test file: transformed as it loads (blank lines dropped, as babel
// does), with an inline source map of itself, compiled by vm.Script with jest's module wrapper on line 0
// and jest's column offset.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function vlq(number) {
  let value = number < 0 ? (-number << 1) | 1 : number << 1;
  let out = "";
  do {
    let digit = value & 31;
    value >>>= 5;
    if (value) digit |= 32;
    out += BASE64[digit];
  } while (value);
  return out;
}

function transform(file) {
  const kept = [];
  const mappings = [];
  let previous = 0;
  fs.readFileSync(file, "utf8").split("\n").forEach((text, original) => {
    if (text.trim() === "") return;
    kept.push(text);
    mappings.push(`AA${vlq(original - previous)}A`);
    previous = original;
  });
  const map = { version: 3, sources: [path.basename(file)], names: [], mappings: mappings.join(";") };
  const inline = Buffer.from(JSON.stringify(map)).toString("base64");
  return `${kept.join("\n")}\n//# sourceMappingURL=data:application/json;base64,${inline}`;
}

const wrapperStart = '({"Object.<anonymous>":function(module,exports,require){';
const file = path.join(__dirname, "spec.js");
const script = new vm.Script(`${wrapperStart}${transform(file)}\n}});`,
  { filename: file, columnOffset: wrapperStart.length });
const module_ = { exports: {} };
script.runInThisContext()["Object.<anonymous>"](module_, module_.exports, require);
module_.exports.run();
